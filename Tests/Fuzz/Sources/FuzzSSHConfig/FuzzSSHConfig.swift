import Foundation
import FuzzSupport
import OCTunnelCore

/// Reads each input as `~/.ssh/config`, the way octunnel does when no ssh client is installed:
/// `SSHConfigFile` for a few host names, then `SSHConfigResolver` against a home of its own
/// (a scratch directory holding `.ssh/config` and two keys). Promises checked: a `Match` block
/// and an `Include` line never apply anything (they are only listed as ignored), keywords come
/// out lowercased, a resolved target has a valid host, user and a port in 1...65535, a user or
/// port written in the target wins, and every message quoting the file is clean for a terminal.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = input(data, size)
    let text = String(decoding: bytes, as: UTF8.self)
    let file = SSHConfigFile(text: text)
    let withoutMatch = SSHConfigFile(text: dropMatchBlocksAndIncludes(text))
    for name in ["vps", "VPS.example.com", "10.0.0.1", "x"] {
        let settings = file.settings(for: name)
        let plain = withoutMatch.settings(for: name)
        precondition(
            settings.values == plain.values && settings.identityFiles == plain.identityFiles,
            "a Match block or an Include line applied something for \(name) in \(hex(bytes))")
        precondition(
            settings.values.keys.allSatisfy { $0 == $0.lowercased() && !["host", "match", "include"].contains($0) },
            "odd keys \(settings.values.keys.sorted()) from \(hex(bytes))")
    }
    resolve(bytes, file: file)
    return 0
}

/// The text with every line from a `Match` line up to the next `Host` line, and every
/// `Include` line, left out: what ssh_config would say if octunnel followed neither.
private func dropMatchBlocksAndIncludes(_ text: String) -> String {
    var kept: [Substring] = []
    var inMatch = false
    for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
        let trimmed = String(line).trimmingCharacters(in: CharacterSet(charactersIn: " \t\r"))
        let keyword = String(
            String.UnicodeScalarView(trimmed.unicodeScalars.prefix { $0 != " " && $0 != "\t" && $0 != "=" })
        ).lowercased()
        if keyword == "host" { inMatch = false }
        if keyword == "match" { inMatch = true }
        if inMatch || keyword == "include" || keyword == "match" {
            kept.append("") // keeps line numbers
            continue
        }
        kept.append(line)
    }
    return kept.joined(separator: "\n")
}

/// The scratch home the resolver reads: `.ssh/config` is rewritten for each input.
private let home: String = {
    let home = scratchDirectory + "/home"
    mkdir(home, 0o700)
    mkdir(home + "/.ssh", 0o700)
    let pair = try! Ed25519KeyPair.generate()
    writeFile(Array(OpenSSHPrivateKey.encode(pair, comment: "fuzz", checkValue: 1).utf8), to: home + "/.ssh/id_ed25519")
    writeFile(
        Array("-----BEGIN RSA PRIVATE KEY-----\nAAAA\n-----END RSA PRIVATE KEY-----\n".utf8), to: home + "/.ssh/id_rsa")
    return home
}()

private func resolve(_ bytes: [UInt8], file: SSHConfigFile) {
    // The resolver reads the IdentityFiles it is given: only let it near files in the scratch home.
    for name in ["vps", "alice"] {
        for identity in file.settings(for: name).identityFiles {
            guard identity.hasPrefix("~/"), !identity.contains(".."), !identity.contains("%") else { return }
        }
    }
    writeFile(bytes, to: home + "/.ssh/config")
    let resolver = SSHConfigResolver(home: home, sshPath: nil, localUser: "fuzz")
    for (target, user, port) in [("vps", nil, nil), ("alice@vps:2222", "alice", 2222)] as [(String, String?, Int?)] {
        let resolution: SSHConfigResolution
        do {
            resolution = try resolver.resolve(target)
        } catch {
            checkShown(error, "resolving \(target) with \(hex(bytes))")
            continue
        }
        let resolved = resolution.target
        precondition((1...65535).contains(resolved.port), "port \(resolved.port) from \(hex(bytes))")
        precondition(
            (try? HostPort.parse(resolved.host.contains(":") ? "[\(resolved.host)]" : resolved.host))?.host
                == resolved.host,
            "host \(hex(resolved.host)) from \(hex(bytes)) is not a valid host")
        precondition(
            (try? SSHTarget.parse("\(resolved.user)@x"))?.user == resolved.user,
            "user \(hex(resolved.user)) from \(hex(bytes))")
        if let user { precondition(resolved.user == user, "the config overrode the target's user: \(hex(bytes))") }
        if let port { precondition(resolved.port == port, "the config overrode the target's port: \(hex(bytes))") }
        if let identity = resolution.identityFile {
            precondition(identity.hasPrefix(home + "/"), "identity \(identity) outside the home from \(hex(bytes))")
        }
        // Both are printed in a note as they are.
        for shown in resolution.ignored + resolution.skippedIdentities {
            precondition(isShownClean(shown), "the note would show \(hex(shown)) from \(hex(bytes))")
        }
    }
}
