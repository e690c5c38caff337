import Foundation
import FuzzSupport
import OCTunnelCore

/// Feeds each input to `OpenSSHPrivateKey` with the passphrase "fuzz", as the key file's text
/// and as the raw `openssh-key-v1` blob (armoured here). The KDF's rounds, salt and lengths come
/// from the file, so the checks are: a key asking for more rounds than allowed is refused
/// without running them, as it is where no passphrase is given and no round can run (the bound
/// is lowered to 1 here so each input stays fast; the real bound, `KeyEncryption.maximumRounds`,
/// is the same code path), what decrypts survives an encode/decode round trip, and every reason
/// given for refusing a file is clean for a terminal (the file's own strings are quoted in some).
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = input(data, size)
    check(String(decoding: bytes, as: UTF8.self), bytes)
    let armoured =
        "-----BEGIN OPENSSH PRIVATE KEY-----\n" + Data(bytes).base64EncodedString(options: .lineLength64Characters)
        + "\n-----END OPENSSH PRIVATE KEY-----\n"
    check(armoured, bytes)
    return 0
}

private let passphrase = SecretBuffer(bytes: Array("fuzz".utf8))
private let maximumRounds = 1

private func check(_ text: String, _ bytes: [UInt8]) {
    let decoded: OpenSSHPrivateKey.Decoded
    do {
        decoded = try OpenSSHPrivateKey.decode(text, passphrase: passphrase, maximumRounds: maximumRounds)
    } catch {
        if case .format(let format) = error {
            precondition(
                isShownClean(format.reason), "the reason shows raw file text: \(hex(format.reason)) for \(hex(bytes))")
        }
        // Refused before the KDF: without a passphrase no round can run, and the refusal is the same.
        if case .format(let format) = error, format.reason.contains("bcrypt rounds") {
            let unrun: String?
            do {
                _ = try OpenSSHPrivateKey.decode(text, passphrase: nil, maximumRounds: maximumRounds); unrun = nil
            } catch {
                if case .format(let refusal) = error { unrun = refusal.reason } else { unrun = nil }
            }
            precondition(unrun == format.reason, "the rounds were refused only after the KDF could run: \(hex(bytes))")
        }
        checkOtherReaders(text, bytes)
        return
    }
    precondition(decoded.pair.seed.count == 32 && decoded.pair.publicKey.count == 32, "odd key lengths")
    // Written back without a passphrase (encrypting again would run the KDF twice more: the
    // unit tests and ssh-keygen check our encryption), it reads back the same.
    let again = try? OpenSSHPrivateKey.decode(
        OpenSSHPrivateKey.encode(decoded.pair, comment: decoded.comment, checkValue: 0x0C70_BE11))
    precondition(again == decoded, "the key changed in a decrypt/encode/decode round trip: \(hex(bytes))")
    precondition(
        SSHPublicKey.parse(line: decoded.publicKey.line)?.blob == decoded.publicKey.blob,
        "the public line does not parse back")
    checkOtherReaders(text, bytes)
}

/// The readers that run before a passphrase is asked for: they refuse in clean words too.
private func checkOtherReaders(_ text: String, _ bytes: [UInt8]) {
    do { _ = try OpenSSHPrivateKey.publicKey(of: text) } catch {
        precondition(
            isShownClean(error.reason), "publicKey(of:) shows raw file text: \(hex(error.reason)) for \(hex(bytes))")
    }
    do { _ = try OpenSSHPrivateKey.decode(text) } catch {
        precondition(isShownClean(error.reason), "decode shows raw file text: \(hex(error.reason)) for \(hex(bytes))")
    }
}
