import Foundation
import FuzzSupport
import OCTunnelCore

/// Plays a hostile server behind the tunnel: a loopback listener answers every request of the
/// health test with the input's bytes (after its first byte) and closes. The first byte picks
/// the step: `HealthCheck.health()` (every health route, `HTTPProbe.get`: status line, headers,
/// Content-Length, chunked and read-until-close bodies, `OpenCodeAnswer.classify`) or
/// `events(generation:)` (the event stream through `ServerSentEventReader`). The health test
/// sends a password. Promises: no answer makes it wait (the server closes, so any wait is a
/// hang libFuzzer reports), the password and its Basic token never appear in what the user
/// reads, and every message and version is clean for a terminal.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = input(data, size)
    guard let mode = bytes.first else { return 0 }
    server.answer(with: Array(bytes.dropFirst()))
    var check = HealthCheck(
        localPort: server.port, remote: HostPort(host: "127.0.0.1", port: 4096), reverseCommand: "octunnel home up",
        timeout: 5, credentials: credentials)
    check.localHost = "127.0.0.1"
    do {
        switch mode % 3 {
        case 0:
            let answer = try check.health()
            checkText(answer.version, bytes)
            // Cut at 80 characters of the server's, each shown as at most 8 (`\u{200b}`), then `…`.
            precondition(
                answer.version.unicodeScalars.count <= 80 * 8 + 1,
                "a version of \(answer.version.unicodeScalars.count) characters")
        case 1: _ = try check.events(generation: .one)
        default: _ = try check.events(generation: .two)
        }
    } catch {
        checkText(asFailure(error).errorDescription ?? "", bytes, lines: true)
    }
    return 0
}

private let password = "s3cr3t-fuzz-pass"
private let credentials = OpenCodeCredentials(password: password)
private let token = Data("opencode:\(password)".utf8).base64EncodedString()

/// Neither the password nor its token, and nothing a terminal would act on.
private func checkText(_ text: String, _ bytes: [UInt8], lines: Bool = false) {
    precondition(
        !text.utf8.contains(password.utf8) && !text.utf8.contains(token.utf8),
        "the password is shown: \(hex(text)) for \(hex(bytes))")
    precondition(
        isShownClean(text, lines: lines), "raw outside text is shown: \(text.debugDescription) for \(hex(bytes))")
}

extension String.UTF8View {
    /// Whether these bytes hold `needle` anywhere.
    func contains(_ needle: String.UTF8View) -> Bool {
        let haystack = Array(self), needle = Array(needle)
        guard needle.count <= haystack.count else { return false }
        return (0...(haystack.count - needle.count)).contains { haystack[$0..<$0 + needle.count].elementsEqual(needle) }
    }
}

/// A loopback HTTP "server" on a thread of its own: reads each request's head, sends the
/// current answer, closes.
private final class AnswerServer: @unchecked Sendable {
    let port: Int
    private let listener: Int32
    private let lock = NSLock()
    private var current: [UInt8] = []

    init() {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) }
        }
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        precondition(listen(fd, 64) == 0, "listen failed")
        listener = fd
        port = Int(UInt16(bigEndian: address.sin_port))
        let thread = Thread { [self] in serve() }
        thread.start()
    }

    func answer(with bytes: [UInt8]) {
        lock.lock(); current = bytes; lock.unlock()
    }

    private func serve() {
        while true {
            let client = accept(listener, nil, nil)
            guard client >= 0 else { continue }
            var request: [UInt8] = []
            var buffer = [UInt8](repeating: 0, count: 4096)
            while !request.ends(with: [13, 10, 13, 10]) {
                let count = recv(client, &buffer, buffer.count, 0)
                guard count > 0 else { break }
                request += buffer[..<count]
            }
            lock.lock(); let answer = current; lock.unlock()
            var sent = 0
            while sent < answer.count {
                let count = answer[sent...].withUnsafeBytes {
                    send(client, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL))
                }
                guard count > 0 else { break }
                sent += count
            }
            close(client)
        }
    }
}

extension Array where Element == UInt8 {
    func ends(with suffix: [UInt8]) -> Bool {
        count >= suffix.count && self[(count - suffix.count)...].elementsEqual(suffix)
    }
}

private let server = AnswerServer()
