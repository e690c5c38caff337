import Foundation
import OCTunnelCore

/// Feeds each input to `OpenSSHPrivateKey.decode` twice: as the key file's text, and as the raw
/// `openssh-key-v1` blob (armoured here, so the blob parser sees exactly these bytes). Whatever
/// decodes must survive an encode/decode round trip unchanged.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    check(try? OpenSSHPrivateKey.decode(String(decoding: bytes, as: UTF8.self)))
    let armoured =
        "-----BEGIN OPENSSH PRIVATE KEY-----\n" + Data(bytes).base64EncodedString(options: .lineLength64Characters)
        + "\n-----END OPENSSH PRIVATE KEY-----\n"
    check(try? OpenSSHPrivateKey.decode(armoured))
    return 0
}

/// A decoded key, written back out and read again, is the same key with the same comment.
private func check(_ decoded: OpenSSHPrivateKey.Decoded?) {
    guard let decoded else { return }
    precondition(decoded.pair.seed.count == 32 && decoded.pair.publicKey.count == 32, "odd key lengths")
    let text = OpenSSHPrivateKey.encode(decoded.pair, comment: decoded.comment, checkValue: 0x0C70_BE11)
    guard let again = try? OpenSSHPrivateKey.decode(text) else {
        preconditionFailure("our own encoding of a decoded key does not decode")
    }
    precondition(again == decoded, "the key changed in an encode/decode round trip")
    let line = decoded.publicKey.line
    precondition(
        SSHPublicKey.parse(line: line)?.blob == decoded.publicKey.blob, "the public line does not parse back: \(line)")
}
