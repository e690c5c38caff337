import CLibSSH2
import Foundation

/// A libssh2 failure: the return code, libssh2's message at that moment, and the call.
public struct LibSSH2Error: Error, CustomStringConvertible, Sendable {
    public let code: Int32
    public let message: String
    public let operation: String

    public var description: String {
        message.isEmpty
            ? "\(operation) failed (libssh2 error \(code))" : "\(operation): \(message) (libssh2 error \(code))"
    }
}

/// What a non-blocking read or write did. `EAGAIN` is a result, not an error.
public enum IOResult: Equatable, Sendable {
    case bytes(Int)
    case wouldBlock
    case eof
    case failed(Int32)
}

/// What one step of a libssh2 call that finishes, waits or fails did (EOF, free, requests).
public enum StepResult: Equatable, Sendable {
    case done
    case wouldBlock
    case failed(Int32)

    init(code: Int32) {
        if code == 0 {
            self = .done
        } else if code == LIBSSH2_ERROR_EAGAIN {
            self = .wouldBlock
        } else {
            self = .failed(code)
        }
    }
}

extension LibSSH2Error {
    /// Whether `code` ends the whole session (drop it and reconnect) rather than one channel.
    static func isSessionLevel(_ code: Int32) -> Bool {
        switch code {
        case LIBSSH2_ERROR_CHANNEL_FAILURE, LIBSSH2_ERROR_CHANNEL_REQUEST_DENIED, LIBSSH2_ERROR_CHANNEL_UNKNOWN,
            LIBSSH2_ERROR_CHANNEL_CLOSED, LIBSSH2_ERROR_CHANNEL_EOF_SENT, LIBSSH2_ERROR_CHANNEL_WINDOW_EXCEEDED,
            LIBSSH2_ERROR_CHANNEL_PACKET_EXCEEDED, LIBSSH2_ERROR_CHANNEL_OUTOFORDER:
            return false
        default:
            return true
        }
    }
}

/// One-time global set-up of libssh2 (`libssh2_init`), done before any thread uses it.
enum LibSSH2 {
    private static let initialized: Bool = {
        libssh2_init(0) == 0
    }()

    static func ensureInitialized() {
        precondition(initialized, "libssh2_init failed")
    }
}

/// The algorithms octunnel accepts, strongest first. One source for both libssh2s: names the
/// running library does not know are dropped before `libssh2_session_method_pref` sees them
/// (`preferences`), so 1.10 (Debian 12) offers CTR ciphers with hmac-sha2 MACs, and 1.11 (Debian 13) AES-GCM and the
/// encrypt-then-MAC MACs first; 1.11.1 adds chacha20-poly1305 and strict key exchange
/// (kex-strict-c-v00, the Terrapin fix) to its own KEXINIT. AES-GCM first: one pass of AEAD
/// instead of a cipher and a MAC, what the ssh-audit hardening guides keep, and on 1.11.1 the
/// fastest (1 GiB: 350-390 MB/s, chacha20-poly1305 317-329, aes128-ctr with an ETM MAC 324;
/// docs/benchmarks.md). chacha20-poly1305 reaches a server that allows nothing else; libssh2
/// only has it where it also has strict key exchange.
enum SSHAlgorithms {
    static let hostKeys = "ssh-ed25519,ecdsa-sha2-nistp256,ecdsa-sha2-nistp384,ecdsa-sha2-nistp521"
    static let keyExchange =
        "curve25519-sha256,curve25519-sha256@libssh.org,ecdh-sha2-nistp256,ecdh-sha2"
        + "-nistp384,ecdh-sha2-nistp521,diffie-hellman-group16-sha512,diffie-hellman-g"
        + "roup18-sha512,diffie-hellman-group14-sha256"
    static let ciphers =
        "aes128-gcm@openssh.com,aes256-gcm@openssh.com,chacha20-poly1305@openssh.com,aes128-ctr,aes256-ctr,aes192-ctr"
    static let macs = "hmac-sha2-256-etm@openssh.com,hmac-sha2-512-etm@openssh.com,hmac-sha2-256,hmac-sha2-512"

    /// Of octunnel's names for `list`, those the running libssh2 can speak.
    static func spoken(_ list: AlgorithmGap.List) -> [String] {
        let (names, method): (String, Int32) =
            switch list {
            case .hostKey: (hostKeys, LIBSSH2_METHOD_HOSTKEY)
            case .keyExchange: (keyExchange, LIBSSH2_METHOD_KEX)
            case .cipher: (ciphers, LIBSSH2_METHOD_CRYPT_CS)
            case .mac: (macs, LIBSSH2_METHOD_MAC_CS)
            }
        return only(LibSSH2.supported(method), of: names)
    }

    /// The lists `SSHSession` hands `libssh2_session_method_pref`, each cut to the names
    /// `speaks(method)` says the running libssh2 knows, in octunnel's order. libssh2 would drop
    /// the others itself, but 1.10.0 does it with an overlapping `memcpy` (kex.c, "Strip out
    /// unsupported method"): undefined behaviour, which AddressSanitizer reported on every
    /// session (docs/sanitizers.md).
    static func preferences(speaking speaks: (Int32) -> [String]) -> [(method: Int32, list: String)] {
        let lists: [(Int32, String)] = [
            (LIBSSH2_METHOD_KEX, keyExchange),
            (LIBSSH2_METHOD_HOSTKEY, hostKeys),
            (LIBSSH2_METHOD_CRYPT_CS, ciphers),
            (LIBSSH2_METHOD_CRYPT_SC, ciphers),
            (LIBSSH2_METHOD_MAC_CS, macs),
            (LIBSSH2_METHOD_MAC_SC, macs),
        ]
        return lists.map { method, names in (method, only(speaks(method), of: names).joined(separator: ",")) }
    }

    /// The names in the comma-separated `names` that `known` holds, in `names`' order.
    private static func only(_ known: [String], of names: String) -> [String] {
        let known = Set(known)
        return names.split(separator: ",").map(String.init).filter(known.contains)
    }
}
