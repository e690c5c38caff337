import Foundation
import FuzzSupport
import OCTunnelCore

/// The push's reply side (issue 54): each input is read as ntfy's JSON stream of the reply topic,
/// line by line (`NtfyEvent.parse`), each message's text as a button's tap (`PushTap.parse`), and
/// the tap checked against a `NonceBook` that holds live nonces of other requests; the whole input
/// is also read as a push URL (`PushURL.parse`). Promises: an event's id is a short word of
/// letters, digits, `_` and `-` (it goes back into `since=`); a tap names a route-safe request and
/// a 32-hex-digit nonce, and its body reads back as the same tap; no fuzzed tap is ever answered
/// (the book's nonces are 128 random bits), and each refusal is one of the four; a URL that parses
/// renders to a URL that parses to the same value, with no control character, no `@`, `?` or `#`,
/// and a topic that is a topic.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = input(data, size)
    let text = String(decoding: bytes, as: UTF8.self)
    let context = { hex(bytes) }
    let book = NonceBook(capacity: 8, lifetime: 3600)
    _ = book.issue(requestID: "per_live", directory: "/p", answers: [.permission(.once), .permission(.reject)])
    for line in text.split(separator: "\n", omittingEmptySubsequences: true).prefix(64) {
        guard let event = NtfyEvent.parse(String(line)) else { continue }
        precondition(!event.id.isEmpty && event.id.utf8.count <= 64 && PushURL.isTopic(event.id), context())
        guard event.isMessage, let message = event.message, let tap = PushTap.parse(message) else { continue }
        precondition(PendingPermission.isRouteSafe(tap.requestID) && tap.nonce.utf8.count == 32, context())
        precondition(PushTap.parse(tap.body) == tap, context())
        switch book.take(requestID: tap.requestID, nonce: tap.nonce) {
        case .success: preconditionFailure("a fuzzed tap was answered: \(context())")
        case .failure(let refused):
            precondition([.forged, .replayed, .expired, .otherRequest].contains(refused.refusal), context())
        }
    }
    if let url = try? PushURL.parse(text) {
        let again = try? PushURL.parse(url.text())
        precondition(again == url, context())
        precondition(
            isShownClean(url.text()) && !url.text().contains("@") && !url.text().contains("?")
                && !url.text().contains("#"), context())
        precondition(url.topic.map(PushURL.isTopic) ?? true, context())
    }
    return 0
}
