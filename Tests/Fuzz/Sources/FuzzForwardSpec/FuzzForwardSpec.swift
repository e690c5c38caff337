import Foundation
import FuzzSupport
import OCTunnelCore

/// Forward specs and hosts as they reach key lines and the VPS's forced command (issue 46): the
/// input is a `-L` / `-R` spec (first byte even: -L, odd: -R; the rest the spec).
///
/// Promises: what parses has hosts with no `~`, no format or bidi character, no byte a shell or
/// sshd gives meaning to; a `-L` listen is an IP address; the key line quotes every listen
/// (`W="…"`) and parses as one authorized_keys line; the spec's own rendering parses back to it.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = input(data, size)
    guard let first = bytes.first else { return 0 }
    let direction: Forward.Direction = first % 2 == 0 ? .local : .remote
    let text = String(decoding: bytes.dropFirst(), as: UTF8.self)
    guard let forward = try? Forward.parse(text, direction: direction, defaultBind: "127.0.0.1") else { return 0 }
    for host in [forward.listen.host, forward.target.host] {
        precondition(
            !host.unicodeScalars.contains {
                $0 == "~" || $0.properties.generalCategory == .format || forbidden.contains($0) || $0.value < 0x20
            },
            "host \(hex(host)) from \(hex(bytes))")
    }
    if direction == .local {
        precondition(
            Sockets.isLoopback(forward.listen.host) || (try? HostPort.parse("[\(forward.listen.host)]:1")) != nil,
            "a -L listen that is no address: \(hex(forward.listen.host))")
    }
    let again = try? Forward.parse(forward.specification, direction: direction, defaultBind: "0.0.0.0")
    precondition(again == forward, "\(hex(text)) → \(hex(forward.specification)) → \(String(describing: again))")

    let listens = Forward.vpsEnds([forward])
    let options = listenAuthorizedKeysOptions(listens: listens)
    // Compared byte by byte: a host starting with a combining mark makes one Character with the quote before it.
    for listen in listens {
        precondition(
            containsBytes(options, #"W=\"\#(listen)\""#),
            "W not quoted for \(hex(listen.description)) in \(hex(String(options.utf8.prefix(600))!))")
    }
    precondition(!options.contains("\n") && !options.contains("\r"), "a line break in the key line: \(hex(options))")
    return 0
}

/// What HostPort.validateHost refuses besides controls, format characters and white space.
private let forbidden = Set(" ,/\\@[]*?!'\"`$;|&<>(){}#~".unicodeScalars)

/// Whether `needle`'s UTF-8 occurs in `haystack`'s.
private func containsBytes(_ haystack: String, _ needle: String) -> Bool {
    let bytes = Array(haystack.utf8), wanted = Array(needle.utf8)
    guard wanted.count <= bytes.count else { return false }
    return (0...(bytes.count - wanted.count)).contains { bytes[$0..<$0 + wanted.count].elementsEqual(wanted) }
}
