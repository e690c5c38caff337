import CLibSSH2
import Foundation

/// A connection to the ssh-agent at `$SSH_AUTH_SOCK` through libssh2 (`libssh2_agent_*`):
/// the agent signs, so no private key is ever in octunnel's memory. Tied to one session
/// (libssh2's agent needs one), which it keeps alive.
final class SSHAgent {
    private let owner: AnyObject?
    private let sessionPointer: OpaquePointer
    private let raw: OpaquePointer
    private var connected = false

    /// One key the agent offers: its public key and libssh2's handle for signing with it.
    struct Identity {
        let key: SSHPublicKey
        fileprivate let handle: UnsafeMutablePointer<libssh2_agent_publickey>
    }

    /// `libssh2_agent_init` on `session`.
    convenience init(session: SSHSession) throws(LibSSH2Error) {
        try self.init(sessionPointer: session.raw, owner: session)
    }

    private init(sessionPointer: OpaquePointer, owner: AnyObject?) throws(LibSSH2Error) {
        guard let agent = libssh2_agent_init(sessionPointer) else {
            throw LibSSH2Error(
                code: LIBSSH2_ERROR_ALLOC, message: "cannot allocate an agent handle", operation: "libssh2_agent_init")
        }
        self.owner = owner
        self.sessionPointer = sessionPointer
        raw = agent
    }

    /// `libssh2_agent_connect` to `$SSH_AUTH_SOCK`.
    func connect() throws(LibSSH2Error) {
        let rc = libssh2_agent_connect(raw)
        if rc != 0 { throw error(rc, "libssh2_agent_connect") }
        connected = true
    }

    /// The agent's keys in its own order (`libssh2_agent_list_identities`, `libssh2_agent_get_identity`).
    func identities() throws(LibSSH2Error) -> [Identity] {
        let rc = libssh2_agent_list_identities(raw)
        if rc != 0 { throw error(rc, "libssh2_agent_list_identities") }
        var result: [Identity] = []
        var previous: UnsafeMutablePointer<libssh2_agent_publickey>?
        while true {
            var next: UnsafeMutablePointer<libssh2_agent_publickey>?
            let status = libssh2_agent_get_identity(raw, &next, previous)
            if status == 1 { break }
            if status < 0 { throw error(status, "libssh2_agent_get_identity") }
            guard let next else { break }
            let blob = Array(UnsafeBufferPointer(start: next.pointee.blob, count: next.pointee.blob_len))
            let comment = next.pointee.comment.map { String(cString: $0) } ?? ""
            if let key = SSHPublicKey(blob: blob) {
                result.append(Identity(key: SSHPublicKey(type: key.type, blob: blob, comment: comment), handle: next))
            }
            previous = next
        }
        return result
    }

    /// Public-key authentication signed by the agent (`libssh2_agent_userauth`), blocking.
    func authenticate(user: String, with identity: Identity) throws(LibSSH2Error) {
        let rc = libssh2_agent_userauth(raw, user, identity.handle)
        if rc != 0 { throw error(rc, "libssh2_agent_userauth") }
    }

    private func error(_ code: Int32, _ operation: String) -> LibSSH2Error {
        var message: UnsafeMutablePointer<CChar>?
        var length: Int32 = 0
        libssh2_session_last_error(sessionPointer, &message, &length, 0)
        return LibSSH2Error(code: code, message: message.map { String(cString: $0) } ?? "", operation: operation)
    }

    /// The agent's keys, read through a session of its own that never touches the network:
    /// for checking the agent before connecting.
    static func listKeys() throws(LibSSH2Error) -> [SSHPublicKey] {
        LibSSH2.ensureInitialized()
        guard let session = libssh2_session_init_ex(nil, nil, nil, nil) else {
            throw LibSSH2Error(
                code: LIBSSH2_ERROR_ALLOC, message: "cannot allocate a session", operation: "libssh2_session_init_ex")
        }
        defer { libssh2_session_free(session) }
        return try listKeys(using: session)
    }

    /// Frees the agent before its caller frees the session.
    private static func listKeys(using session: OpaquePointer) throws(LibSSH2Error) -> [SSHPublicKey] {
        let agent = try SSHAgent(sessionPointer: session, owner: nil)
        try agent.connect()
        return try agent.identities().map(\.key)
    }

    deinit {
        if connected { libssh2_agent_disconnect(raw) }
        libssh2_agent_free(raw)
    }
}
