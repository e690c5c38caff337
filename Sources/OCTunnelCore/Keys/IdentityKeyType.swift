import Foundation

/// The key type of a private key file, read from the clear header of an openssh-key-v1 file
/// (readable even when the key is encrypted), never decrypting anything: enough to skip, as
/// ssh does, an IdentityFile octunnel cannot sign with.
enum IdentityKeyType {
    /// The key types octunnel signs with from a key file.
    static let usable: Set<String> = ["ssh-ed25519"]

    /// `ssh-ed25519`, `ssh-rsa`, …; "PEM" for a PEM file; nil when unreadable or not a key.
    static func of(path: String) -> String? {
        guard let bytes = try? FileBytes.read(path), bytes.count < 1 << 20 else { return nil }
        let text = String(decoding: bytes, as: UTF8.self)
        let lines = text.split(whereSeparator: \.isNewline).map { $0.trimmingCharacters(in: .whitespaces) }.filter {
            !$0.isEmpty
        }
        guard let first = lines.first else { return nil }
        guard first == "-----BEGIN OPENSSH PRIVATE KEY-----" else { return first.hasPrefix("-----BEGIN") ? "PEM" : nil }
        guard let end = lines.firstIndex(of: "-----END OPENSSH PRIVATE KEY-----"),
            let blob = Data(base64Encoded: lines[1..<end].joined())
        else { return nil }
        var reader = SSHWireReader([UInt8](blob))
        guard let magic = try? reader.raw(15), magic == Array("openssh-key-v1".utf8) + [0],
            (try? reader.string()) != nil, (try? reader.string()) != nil, (try? reader.string()) != nil,
            let count = try? reader.uint32(), count >= 1, let publicBlob = try? reader.string()
        else { return nil }
        var publicReader = SSHWireReader(publicBlob)
        return try? publicReader.text()
    }
}
