import Foundation

/// The stages of getting a session, in order; `tunnel check` reports each with its time.
public enum ConnectStage: String, Sendable, CaseIterable {
    case resolve, tcp, handshake, hostKey = "host key", authentication
}

/// A finished stage and what it found.
public struct StageReport: Sendable {
    public let stage: ConnectStage
    public let milliseconds: Int
    public let detail: String
}

/// Why the host key was accepted.
public enum HostKeyTrust: Sendable, Equatable {
    /// octunnel's own store already held it.
    case known
    /// Nothing knew the host: trusted on first use (and recorded).
    case firstUse
    /// The user's OpenSSH known_hosts held it (and now octunnel's store does too).
    case openSSH(OpenSSHKnownHosts.Place)

    /// The words for the host-key stage.
    public var text: String {
        switch self {
        case .known: return "verified"
        case .firstUse: return "trusted on first use"
        case .openSSH(let place):
            return "verified by \(place.file) (line \(place.line)), recorded in octunnel's known_hosts"
        }
    }

    /// A short tag for JSON: known, first-use or openssh-known-hosts.
    public var tag: String {
        switch self {
        case .known: return "known"
        case .firstUse: return "first-use"
        case .openSSH: return "openssh-known-hosts"
        }
    }
}

/// Facts about a session worth telling the user.
public struct SessionInfo: Sendable {
    public let hostKey: SSHPublicKey
    public let newlyTrusted: Bool
    public let hostKeyTrust: HostKeyTrust
    public let keyExchange: String
    public let cipher: String
    public let mac: String
    public let serverBanner: String
    public let user: String
    public let clientKeyFingerprint: String
}

/// An authenticated session with its idle `session` channel, ready for the event loop.
public final class EstablishedSession: @unchecked Sendable {
    public let session: SSHSession
    let idleChannel: SSHChannel
    public let info: SessionInfo

    init(session: SSHSession, idleChannel: SSHChannel, info: SessionInfo) {
        self.session = session
        self.idleChannel = idleChannel
        self.info = info
    }
}
