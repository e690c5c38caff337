import Foundation

/// A public key as SSH carries it: its type name and wire blob, plus an optional comment.
public struct SSHPublicKey: Sendable, Equatable {
    public let type: String
    public let blob: [UInt8]
    public let comment: String

    public init(type: String, blob: [UInt8], comment: String = "") {
        self.type = type
        self.blob = blob
        self.comment = comment
    }

    /// The `ssh-ed25519` public key for a 32-byte Ed25519 key.
    public init(ed25519 publicKey: [UInt8], comment: String) {
        var writer = SSHWireWriter()
        writer.string("ssh-ed25519")
        writer.string(publicKey)
        self.init(type: "ssh-ed25519", blob: writer.bytes, comment: comment)
    }

    /// Reads a key from its wire blob, taking the type from the blob's first string.
    public init?(blob: [UInt8]) {
        var reader = SSHWireReader(blob)
        guard let type = try? reader.text(), !type.isEmpty else { return nil }
        self.init(type: type, blob: blob)
    }

    /// Parses an authorized_keys/`.pub` line: `type base64 [comment]`.
    ///
    /// Splits on space and tab scalars, as ssh does: a comment starting with a combining mark
    /// must not fuse with the space before it.
    public static func parse(line: String) -> SSHPublicKey? {
        let fields = line.unicodeScalars.split(maxSplits: 2, whereSeparator: { $0 == " " || $0 == "\t" }).map(
            String.init)
        guard fields.count >= 2, let data = Data(base64Encoded: String(fields[1])) else { return nil }
        let blob = [UInt8](data)
        var reader = SSHWireReader(blob)
        guard let inner = try? reader.text(), inner == fields[0] else { return nil }
        let comment = fields.count > 2 ? String(fields[2]).trimmingCharacters(in: .whitespacesAndNewlines) : ""
        return SSHPublicKey(type: String(fields[0]), blob: blob, comment: comment)
    }

    /// `type base64 comment`: the line for authorized_keys. It is one line whatever the comment
    /// holds (a key file's comment is anything): each control character in it is written as a
    /// space, so a line break cannot start a second authorized_keys line with options of its own.
    public var line: String {
        let base = "\(type) \(Data(blob).base64EncodedString())"
        let shown = String(
            String.UnicodeScalarView(comment.unicodeScalars.map { $0.value < 0x20 || $0.value == 0x7F ? " " : $0 })
        )
        .trimmingCharacters(in: .whitespacesAndNewlines) // as `parse(line:)` reads it back
        return shown.isEmpty ? base : "\(base) \(shown)"
    }

    /// `SHA256:` and the unpadded base64 of the blob's SHA-256, as `ssh-keygen -l` prints it.
    public var fingerprint: String { Fingerprint.sha256(blob) }
}

/// OpenSSH-style key fingerprints.
public enum Fingerprint {
    /// `SHA256:` + base64(SHA-256(blob)) without `=` padding: 43 characters after the prefix.
    public static func sha256<C: Collection>(_ blob: C) -> String where C.Element == UInt8 {
        format(sha256Digest: Crypto.sha256(blob))
    }

    /// Formats a 32-byte SHA-256 digest as OpenSSH does.
    public static func format(sha256Digest digest: [UInt8]) -> String {
        var text = Data(digest).base64EncodedString()
        while text.hasSuffix("=") { text.removeLast() }
        return "SHA256:\(text)"
    }

    /// Whether `text` looks like an OpenSSH SHA-256 fingerprint.
    public static func isValid(_ text: String) -> Bool {
        guard text.hasPrefix("SHA256:") else { return false }
        let body = text.dropFirst(7)
        return body.count == 43 && Data(base64Encoded: body + "=") != nil
    }
}
