/// What went wrong between the bytes a test sent and the bytes it got back, said so that the
/// layer can be told: a head or a stretch missing, bytes from somewhere else, a short answer.
public func mismatchDescription(got: [UInt8], expected: [UInt8]) -> String {
    let common = min(got.count, expected.count)
    let differs = (0..<common).first { got[$0] != expected[$0] } ?? common
    var text = "\(got.count) bytes back of \(expected.count), first difference at \(differs)"
    guard differs < got.count else { return text + " (a short answer: the rest never came)" }
    // Where the differing bytes come from: later in what was sent (a stretch lost), or nowhere
    // in it (bytes from another stream or a corrupted copy).
    let probe = Array(got[differs..<min(got.count, differs + 32)])
    if let at = firstIndex(of: probe, in: expected, from: differs) {
        text += "; from there the answer is what was sent from byte \(at) on: \(at - differs) bytes missing"
    } else {
        text += "; the bytes there are nowhere in what was sent"
    }
    return text
}

private func firstIndex(of needle: [UInt8], in haystack: [UInt8], from start: Int) -> Int? {
    guard !needle.isEmpty, haystack.count >= needle.count, start <= haystack.count - needle.count else { return nil }
    for index in start...(haystack.count - needle.count) where haystack[index] == needle[0] {
        if haystack[index..<(index + needle.count)].elementsEqual(needle) { return index }
    }
    return nil
}
