import Foundation
import OCTunnelCore

/// Feeds each input (as text) to `HostPort.parse` and `SSHTarget.parse`. What parses must keep
/// the promises the rest of octunnel relies on: a port in 1...65535, no byte of the forbidden
/// set in the host (it reaches argv, shell renderings and known_hosts), and a rendering that
/// parses back to the same value.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let text = String(decoding: UnsafeBufferPointer(start: data, count: size), as: UTF8.self)
    if let hostPort = try? HostPort.parse(text) {
        checkHost(hostPort.host, in: text)
        precondition((1...65535).contains(hostPort.port), "port \(hostPort.port) from \(debug(text))")
        let again = try? HostPort.parse(hostPort.description)
        precondition(
            again == hostPort, "\(debug(text)) → \(debug(hostPort.description)) → \(String(describing: again))")
        checkKnownHostsName(hostPort)
    }
    if let target = try? SSHTarget.parse(text, defaultUser: "fuzz") {
        checkHost(target.host, in: text)
        precondition(
            !target.user.isEmpty && target.user.utf8.allSatisfy(isUserByte)
                && target.user.utf8.first != UInt8(ascii: "-"),
            "user \(debug(target.user)) from \(debug(text))")
        let again = try? SSHTarget.parse(target.description, defaultUser: "other")
        precondition(again == target, "\(debug(text)) → \(debug(target.description)) → \(String(describing: again))")
    }
    return 0
}

/// Bytes a host name may never contain: whitespace, controls, and what a shell, ssh or
/// known_hosts gives meaning to (HostPort.validateHost's list).
private let forbidden = Set(Array(" \t\r\n,/\\@[]*?!'\"`$;|&<>(){}#~".utf8) + Array(0..<0x20) + [0x7F])

private func checkHost(_ host: String, in text: String) {
    precondition(!host.isEmpty && host.utf8.count <= 253, "host \(debug(host)) from \(debug(text))")
    precondition(
        !host.utf8.contains(where: forbidden.contains), "host \(debug(host)) from \(debug(text)) has a forbidden byte")
    precondition(host.utf8.first != UInt8(ascii: "-"), "host \(debug(host)) from \(debug(text)) starts with -")
    precondition(
        !host.unicodeScalars.contains { $0.properties.generalCategory == .format },
        "host \(debug(host)) from \(debug(text)) has a format character")
}

private func isUserByte(_ byte: UInt8) -> Bool {
    switch byte {
    case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
        UInt8(ascii: "0")...UInt8(ascii: "9"):
        true
    case UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "-"), UInt8(ascii: "$"): true
    default: false
    }
}

/// The name `record` writes for a host is one that known_hosts reads back as exactly that host.
private func checkKnownHostsName(_ hostPort: HostPort) {
    let name = hostPort.knownHostsName
    let line = Array("\(name) ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIGu0GX1RyWrk2yQzh3rGEiLa34WO6ZWkTuZGJ3UfWZ0+".utf8)
    guard case .entry(let entry) = KnownHostsFile.parse(line) else {
        preconditionFailure("\(debug(name)) makes an unreadable line")
    }
    precondition(entry.hosts == name && entry.match(name) == .exact, "\(debug(name)) does not match itself")
}

/// The input's bytes in hex, so a failure message can be replayed exactly.
private func debug(_ text: String) -> String {
    "\"\(text)\" (\(text.utf8.map { String($0, radix: 16) }.joined(separator: " ")))"
}
