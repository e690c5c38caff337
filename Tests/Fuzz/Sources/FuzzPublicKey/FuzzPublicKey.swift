import Foundation
import FuzzSupport
import OCTunnelCore

/// Reads each input as lines of a `.pub` / authorized_keys file through `SSHPublicKey.parse(line:)`.
/// A key that parses must: name in its line the type its blob names, render a line that parses
/// back to the same key (and line), have an OpenSSH-shaped fingerprint, and give authorized_keys lines
/// (`pubkey --restrict`, `--restrict --listen`) that are one line each, ending in the key's own
/// line: a key's comment must never add a line (with its own options) to authorized_keys.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = input(data, size)
    let text = String(decoding: bytes, as: UTF8.self)
    for line in [text] + text.split(separator: "\n").prefix(16).map(String.init) {
        guard let key = SSHPublicKey.parse(line: line) else { continue }
        check(key, from: bytes)
    }
    if let key = SSHPublicKey(blob: bytes) { _ = key.fingerprint }
    return 0
}

private func check(_ key: SSHPublicKey, from bytes: [UInt8]) {
    precondition(SSHPublicKey(blob: key.blob)?.type == key.type, "the line's type is not the blob's: \(hex(bytes))")
    // The line shows a comment's control characters as spaces: the key, and the line, come back.
    let again = SSHPublicKey.parse(line: key.line)
    precondition(
        again?.type == key.type && again?.blob == key.blob && again?.line == key.line,
        "\(hex(key.line)) parses back as \(String(describing: again)), from \(hex(bytes))")
    precondition(Fingerprint.isValid(key.fingerprint), "fingerprint \(key.fingerprint)")
    for line in [
        key.line, restrictedAuthorizedKeysLine(key, remotePort: 4096), listenAuthorizedKeysLine(key, remotePort: 4096),
    ] {
        precondition(
            !line.unicodeScalars.contains { $0 == "\n" || $0 == "\r" || $0 == "\0" },
            "an authorized_keys line breaks in two: \(hex(line)) from \(hex(bytes))")
        precondition(line.hasSuffix(key.line), "\(hex(line)) does not end in the key's line")
    }
}
