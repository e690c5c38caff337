import Foundation

/// A failure a user can meet, carrying its own words, exit code and layer as swift-argument-parser's
/// `ExitCode` and `ValidationError` carry theirs: each room owns its type (`KeyError`, `TrustError`,
/// `ConnectError`, …), so a new error is one case and its one entry in that room's `details` switch.
public protocol OCTunnelFailure: Error, LocalizedError, Sendable {
    /// The layer of the path where this room's failures happen ("key", "host key", …), for
    /// diagnosis output; a case in another layer names its own in `details`.
    static var roomLayer: String { get }
    /// This failure's exit code, words and (if not the room's) layer: one switch per room.
    var details: FailureDetails { get }
    /// Whether `other` is the same failure: the same room's type, case and values.
    func isSame(as other: any OCTunnelFailure) -> Bool
}

extension OCTunnelFailure where Self: Equatable {
    /// Whether `other` is the same failure: the same room's type, case and values.
    public func isSame(as other: any OCTunnelFailure) -> Bool { (other.unboxed as? Self) == self }
}

extension OCTunnelFailure {
    /// The documented exit code for this failure (the table in `ExitStatus`, rendered into docs/cli.md).
    public var exitStatus: ExitStatus { details.exitStatus }
    /// The layer of the path that failed, for diagnosis output ("key", "tcp", "host key", …).
    public var layer: String { details.layer ?? Self.roomLayer }
    /// One sentence with the next step.
    public var errorDescription: String? { details.words }

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
    /// No layer of the path: octunnel itself.
    public static let roomLayer = "octunnel"
    /// 69 (unavailable), and what was thrown, as it is.
    public var details: FailureDetails { FailureDetails(.unavailable, thrown) }
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

    /// Never read: a boxed failure is in its own room's layer (`details` names it).
    public static let roomLayer = "octunnel"
    /// The boxed failure's exit code, words and layer.
    public var details: FailureDetails {
        let details = base.details
        return FailureDetails(details.exitStatus, details.words, layer: base.layer)
    }

    /// Whether `other`, boxed or not, is the failure in this box.
    public func isSame(as other: any OCTunnelFailure) -> Bool { base.isSame(as: other.unboxed) }

    /// The same failure: the same room's type, case and values.
    public static func == (lhs: AnyFailure, rhs: AnyFailure) -> Bool { lhs.base.isSame(as: rhs.base) }
}
