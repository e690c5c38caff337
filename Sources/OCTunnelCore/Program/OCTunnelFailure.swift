import Foundation

/// A failure a user can meet, carrying its own words, exit code and layer as swift-argument-parser's
/// `ExitCode` and `ValidationError` carry theirs: each room owns its type (`KeyError`, `TrustError`,
/// `ConnectError`, …), so a new error is one case and its lines in that room's file.
public protocol OCTunnelFailure: Error, LocalizedError, Sendable {
    /// The documented exit code for this failure (the table in `ExitStatus`, rendered into docs/cli.md).
    var exitStatus: ExitStatus { get }
    /// The layer of the path that failed, for diagnosis output ("key", "tcp", "host key", …).
    var layer: String { get }
    /// Whether `other` is the same failure: the same room's type, case and values.
    func isSame(as other: any OCTunnelFailure) -> Bool
}

extension OCTunnelFailure where Self: Equatable {
    /// Whether `other` is the same failure: the same room's type, case and values.
    public func isSame(as other: any OCTunnelFailure) -> Bool { (other.unboxed as? Self) == self }
}

extension OCTunnelFailure {
    /// The room's own failure, out of its box if it is an `AnyFailure`.
    public var unboxed: any OCTunnelFailure { (self as? AnyFailure)?.base ?? self }

    /// `host:port` as a user types it (IPv6 in brackets), for the rooms' sentences.
    static func endpoint(_ host: String, _ port: Int) -> String {
        HostPort(host: host, port: port).description
    }
}

/// `error` as octunnel's own failure, if it is one (the top-level catch and the checks that name the first failure).
public func octunnelFailure(_ error: any Error) -> (any OCTunnelFailure)? {
    error as? any OCTunnelFailure
}

/// `error` as octunnel's failure: a room's own, or (not expected: the core throws only those) one
/// naming what was thrown.
public func asFailure(_ error: any Error) -> any OCTunnelFailure {
    octunnelFailure(error) ?? UnexpectedFailure(thrown: "\(error)")
}

/// Something thrown that is no room's failure (a bug): said as it is, exit 69.
public struct UnexpectedFailure: OCTunnelFailure, Equatable {
    /// What was thrown, as Swift describes it.
    public let thrown: String
    /// 69: unavailable.
    public var exitStatus: ExitStatus { .unavailable }
    /// No layer of the path: octunnel itself.
    public var layer: String { "octunnel" }
    /// What was thrown, as it is.
    public var errorDescription: String? { thrown }
}

/// Any room's failure as one concrete value, for the few places that must hold one in an
/// `Equatable` type or a `Result` (a failed attempt, a push's settings): equal when the same.
public struct AnyFailure: OCTunnelFailure, Equatable {
    /// The room's own failure.
    public let base: any OCTunnelFailure

    /// `base`, unwrapped first if it is itself boxed.
    public init(_ base: any OCTunnelFailure) {
        self.base = (base as? AnyFailure)?.base ?? base
    }

    /// What reading `path` threw, boxed: a room's failure as itself, anything else as `cannotRead`.
    public static func reading(_ path: String, failed error: any Error) -> AnyFailure {
        AnyFailure(octunnelFailure(error) ?? LocalFileError.cannotRead(path: path, reason: "\(error)"))
    }

    /// The boxed failure's exit code.
    public var exitStatus: ExitStatus { base.exitStatus }
    /// The boxed failure's layer.
    public var layer: String { base.layer }
    /// The boxed failure's words.
    public var errorDescription: String? { base.errorDescription }

    /// Whether `other`, boxed or not, is the failure in this box.
    public func isSame(as other: any OCTunnelFailure) -> Bool { base.isSame(as: other.unboxed) }

    /// The same failure: the same room's type, case and values.
    public static func == (lhs: AnyFailure, rhs: AnyFailure) -> Bool { lhs.base.isSame(as: rhs.base) }
}
