import Foundation
import FuzzSupport
import OCTunnelCore

/// Judges each input with `OpenCodeAnswer.classify`: the first byte picks the route, the second
/// the status, the third the Content-Type, the rest is the body. Promises: only a 200 from a
/// health route whose JSON names a non-empty version is OpenCode, of that route's generation;
/// a 401 is always "needs a password", a 404 never OpenCode; a home gateway answer is a 502
/// with a home port in range; a foreign answer's detail is clean for a terminal and short.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = input(data, size)
    guard bytes.count >= 3 else { return 0 }
    let path = paths[Int(bytes[0]) % paths.count]
    let status = Int(bytes[1]) < statuses.count ? statuses[Int(bytes[1])] : 100 + Int(bytes[1]) * 3
    let contentType = types[Int(bytes[2]) % types.count]
    let body = Array(bytes.dropFirst(3))
    let answer = OpenCodeAnswer.classify(path: path, status: status, contentType: contentType, body: body)
    precondition(
        answer == OpenCodeAnswer.classify(path: path, status: status, contentType: contentType, body: body),
        "not deterministic")
    let context = { "\(path) \(status) \(contentType ?? "-") \(hex(body)) → \(answer)" }
    switch answer {
    case .openCode(let version, let generation):
        let route = OpenCodeAnswer.healthRoutes.first { $0.path == path }
        precondition(status == 200 && route?.generation == generation && !version.isEmpty, context())
        // Decoded with Foundation's JSONDecoder, as the client reads it (JSONSerialization refuses
        // raw control characters inside another field's string, which the decoder lets pass).
        let named = try? JSONDecoder().decode(NamedVersion.self, from: Data(body))
        precondition(named?.version == version, context())
    case .routeMissing:
        precondition(status == 404, context())
    case .webPage:
        precondition(status == 200 || status == 404, context())
    case .needsPassword:
        precondition(status == 401, context())
    case .foreign(let detail):
        precondition(isShownClean(detail) && detail.unicodeScalars.count < 200, context())
    case .homeGateway(let gateway):
        precondition(status == 502 && (1...65535).contains(gateway.home.port), context())
    }
    _ = OpenCodeAnswer.isServerConnected(String(decoding: body, as: UTF8.self))
    return 0
}

private let paths = OpenCodeAnswer.healthRoutes.map(\.path) + ["/global/event", "/event", "/api/event", "/"]
private let statuses = [200, 401, 404, 502, 500, 301, 204, 403]
private let types: [String?] = [
    nil, "application/json", "text/html; charset=utf-8", "TEXT/HTML", "text/plain", "text/event-stream",
]

/// The one field the promise checks: the version the body names.
private struct NamedVersion: Decodable {
    let version: String?
}
