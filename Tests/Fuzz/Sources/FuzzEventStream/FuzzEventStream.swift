import Foundation
import FuzzSupport
import OCTunnelCore

/// Feeds each input to `ServerSentEventReader` (small bounds: lines of 64 bytes, events of 256)
/// whole, cut in two at a point the first byte picks, and a byte at a time. The reader promises
/// that where the reads are cut changes nothing (a CR ending one read and an LF starting the
/// next are one line end; a UTF-8 character split across reads is not split), and that its
/// bounds hold: no event's data is over the event bound, a line over the line bound is an error.
/// And the events are the ones a plain restatement of the HTML standard's rules (on bytes, all
/// input at once) gives.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = input(data, size)
    let whole = read([bytes[...]])
    let cut = bytes.isEmpty ? 0 : Int(bytes[0]) % (bytes.count + 1)
    let halves = read([bytes[..<cut], bytes[cut...]])
    precondition(halves == whole, "cut at \(cut): \(halves) != \(whole) for \(hex(bytes))")
    if bytes.count <= 512 {
        let single = read(bytes.indices.map { bytes[$0...$0] })
        precondition(single == whole, "a byte at a time: \(single) != \(whole) for \(hex(bytes))")
    }
    let expected = reference(bytes)
    precondition(whole == expected, "\(whole) != the standard's \(expected) for \(hex(bytes))")
    for event in whole.events {
        precondition(event.data.utf8.count <= maximumEvent, "an event of \(event.data.utf8.count) bytes: \(hex(bytes))")
        precondition(
            !event.type.isEmpty && !event.type.unicodeScalars.contains { $0 == "\n" || $0 == "\r" },
            "type \(hex(event.type))")
        precondition(
            !event.lastEventID.unicodeScalars.contains { $0 == "\n" || $0 == "\r" || $0 == "\0" },
            "id \(hex(event.lastEventID))")
        precondition(event.retry.map { $0 >= 0 } ?? true, "retry \(String(describing: event.retry))")
        _ = OpenCodeAnswer.isServerConnected(event.data)
    }
    return 0
}

private let maximumLine = 64
private let maximumEvent = 256

/// Every event the reads give, or how the stream stopped.
private struct Outcome: Equatable {
    var events: [ServerSentEvent] = []
    var failure: ServerSentEventReader.Failure?
}

private func read(_ pieces: [ArraySlice<UInt8>]) -> Outcome {
    var reader = ServerSentEventReader(maximumLineLength: maximumLine, maximumEventSize: maximumEvent)
    var outcome = Outcome()
    for piece in pieces {
        do {
            outcome.events += try reader.feed(piece)
        } catch {
            // A failure ends the stream; which events came before it depends on the cuts.
            return Outcome(events: [], failure: error)
        }
    }
    return outcome
}

/// The HTML standard's event stream interpretation (§9.2.6), restated over the whole input:
/// a leading BOM goes, lines end at CRLF, LF or CR, fields split at the first colon with one
/// space after it removed; with the same bounds as the reader.
private func reference(_ bytes: [UInt8]) -> Outcome {
    var rest = bytes[...]
    if rest.starts(with: [0xEF, 0xBB, 0xBF]) { rest = rest.dropFirst(3) }
    var lines: [ArraySlice<UInt8>] = []
    var tooLong = false
    var start = rest.startIndex, index = rest.startIndex
    while index < rest.endIndex {
        let byte = rest[index]
        if byte == 10 || byte == 13 {
            lines.append(rest[start..<index])
            if byte == 13, index + 1 < rest.endIndex, rest[index + 1] == 10 { index += 1 }
            start = index + 1
        } else if index - start + 1 > maximumLine {
            tooLong = true // after the lines before it
            break
        }
        index += 1
    }
    var outcome = Outcome()
    var type = "", data: [String] = [], dataBytes = 0, id = "", retry: Int?
    for line in lines {
        if line.isEmpty {
            if !data.isEmpty {
                outcome.events.append(
                    ServerSentEvent(
                        type: type.isEmpty ? "message" : type, data: data.joined(separator: "\n"), lastEventID: id,
                        retry: retry))
            }
            type = ""; data = []; dataBytes = 0; retry = nil
            continue
        }
        if line.first == 0x3A { continue }
        let colon = line.firstIndex(of: 0x3A) ?? line.endIndex
        var value = colon < line.endIndex ? line[(colon + 1)...] : []
        if value.first == 0x20 { value = value.dropFirst() }
        let text = String(decoding: value, as: UTF8.self)
        switch String(decoding: line[..<colon], as: UTF8.self) {
        case "event": type = text
        case "data":
            dataBytes += text.utf8.count + 1
            if dataBytes > maximumEvent { return Outcome(events: [], failure: .eventTooLarge(maximumEvent)) }
            data.append(text)
        case "id": if !value.contains(0) { id = text }
        case "retry": if !value.isEmpty, value.allSatisfy({ (0x30...0x39).contains($0) }) { retry = Int(text) }
        default: break
        }
    }
    return tooLong ? Outcome(events: [], failure: .lineTooLong(maximumLine)) : outcome
}
