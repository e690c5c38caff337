import Foundation

/// The name of a set of saved settings (`--profile NAME`): two VPSes, or a work and a home
/// machine, each with its own settings, service units and status sockets, sharing the key and
/// the trust store. Safe as part of a file name, a systemd unit name and a launchd label.
public struct ProfileName: Hashable, Comparable, Sendable, CustomStringConvertible {
    /// The profile used when none is named; it is the only one in files from before profiles.
    public static let `default` = ProfileName(checked: "default")
    /// The longest name accepted: unit names, labels and socket paths stay short.
    public static let maximumLength = 32

    public let rawValue: String

    private init(checked: String) { rawValue = checked }

    /// Accepts 1-32 lowercase ASCII letters, digits, `-` and `_`, starting with a letter or a
    /// digit (lowercase only: macOS file names ignore case, so `Work` and `work` would collide).
    public init(_ text: String) throws(ProfileNameError) {
        guard !text.isEmpty else { throw ProfileNameError(name: text, reason: "it is empty") }
        guard text.utf8.count <= Self.maximumLength else {
            throw ProfileNameError(name: text, reason: "it is longer than \(Self.maximumLength) characters")
        }
        let allowed = Set("abcdefghijklmnopqrstuvwxyz0123456789-_".utf8)
        guard text.utf8.allSatisfy({ allowed.contains($0) }) else {
            throw ProfileNameError(name: text, reason: "use only lowercase letters, digits, - and _")
        }
        guard let first = text.utf8.first, first != UInt8(ascii: "-"), first != UInt8(ascii: "_") else {
            throw ProfileNameError(name: text, reason: "it must start with a letter or a digit")
        }
        rawValue = text
    }

    /// `--profile`, else `$OCTUNNEL_PROFILE`, else `default`; an empty value falls through.
    public static func resolve(
        explicit: String?, environment: [String: String] = ProcessInfo.processInfo.environment
    ) throws(ProfileNameError) -> ProfileName {
        if let explicit, !explicit.isEmpty { return try ProfileName(explicit) }
        if let named = environment["OCTUNNEL_PROFILE"], !named.isEmpty { return try ProfileName(named) }
        return .default
    }

    /// Whether a profile was named explicitly (flag or environment) rather than defaulted.
    public static func isNamed(
        explicit: String?, environment: [String: String] = ProcessInfo.processInfo.environment
    ) -> Bool {
        !(explicit ?? "").isEmpty || !(environment["OCTUNNEL_PROFILE"] ?? "").isEmpty
    }

    public var isDefault: Bool { self == .default }
    public var description: String { rawValue }

    public static func < (lhs: ProfileName, rhs: ProfileName) -> Bool {
        // The default profile first, then by name.
        if lhs.isDefault != rhs.isDefault { return lhs.isDefault }
        return lhs.rawValue < rhs.rawValue
    }
}

/// A profile name that cannot be used, with the reason.
public struct ProfileNameError: Error, Equatable, Sendable, CustomStringConvertible {
    public let name: String
    public let reason: String
    /// The name is what was typed or read from config.json: shown as outside text.
    public var description: String { "bad profile name \"\(OutsideText.shown(name, limit: 64))\": \(reason)" }
}
