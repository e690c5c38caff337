import Foundation
import FuzzSupport
import OCTunnelCore

/// Reads each input as `config.json` through the public API (`ConfigFile.read`, then each
/// profile's `settings(of:)`), in a home of its own under the scratch directory. Promises: a
/// file that is refused is refused in words clean for a terminal (profile names and keys come
/// from the file); settings that load have valid hosts, a user, and ports in range; saving a
/// loaded section back (into a copy of the file) reads back the same and keeps every other
/// byte of meaning: every other profile, section and unknown key.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = input(data, size)
    writeFile(bytes, to: home.configPath)
    let contents: ConfigFile.Contents
    do {
        guard let read = try ConfigFile(directory: home).read() else {
            preconditionFailure("the file just written is missing")
        }
        contents = read
    } catch {
        checkShown(error, "reading \(hex(bytes))")
        return 0
    }
    for profile in contents.profiles.sorted().prefix(4) {
        let settings: SavedSettings?
        do {
            settings = try contents.settings(of: profile)
        } catch {
            checkShown(error, "profile \(profile) of \(hex(bytes))")
            continue
        }
        guard let settings else { continue }
        if let tunnel = settings.tunnel {
            checkConnection(
                tunnel.host, tunnel.username, [tunnel.port, tunnel.remotePort, tunnel.homePort], [tunnel.remoteHost],
                bytes)
            precondition((0...65535).contains(tunnel.localPort), "local port \(tunnel.localPort) from \(hex(bytes))")
            checkSave(bytes, contents, profile, "tunnel") { try tunnel.save(to: copy, profile: profile) }
        }
        if let homeSection = settings.home {
            checkConnection(
                homeSection.host, homeSection.username,
                [homeSection.port, homeSection.remotePort, homeSection.homePort],
                [homeSection.remoteHost, homeSection.homeHost], bytes)
            checkSave(bytes, contents, profile, "home") { try homeSection.save(to: copy, profile: profile) }
        }
    }
    return 0
}

private let home: OctunnelDirectory = {
    let home = OctunnelDirectory(path: scratchDirectory + "/octunnel")
    _ = try? home.prepare()
    return home
}()

/// Where a loaded section is saved back, over a copy of the input.
private let copy: OctunnelDirectory = {
    let copy = OctunnelDirectory(path: scratchDirectory + "/octunnel-copy")
    _ = try? copy.prepare()
    return copy
}()

private func checkConnection(_ host: String, _ user: String, _ ports: [Int], _ hosts: [String?], _ bytes: [UInt8]) {
    for host in [host] + hosts.compactMap({ $0 }) {
        let parsed = try? HostPort.parse(host.contains(":") ? "[\(host)]" : host)
        precondition(parsed?.host == host, "host \(hex(host)) loaded from \(hex(bytes))")
    }
    precondition((try? SSHTarget.parse("\(user)@x"))?.user == user, "user \(hex(user)) loaded from \(hex(bytes))")
    precondition(ports.allSatisfy { (1...65535).contains($0) }, "ports \(ports) loaded from \(hex(bytes))")
}

/// Saves one loaded section into a copy of the file: every profile reads as before, and the
/// file's JSON is the same apart from the version and the section saved.
private func checkSave(
    _ bytes: [UInt8], _ before: ConfigFile.Contents, _ profile: ProfileName, _ role: String,
    _ save: () throws -> Void
) {
    writeFile(bytes, to: copy.configPath)
    do { try save() } catch { preconditionFailure("saving a loaded section failed: \(error) for \(hex(bytes))") }
    guard let after = try? ConfigFile(directory: copy).read() else {
        preconditionFailure("the saved file does not read: \(hex(bytes))")
    }
    precondition(before.profiles.sorted() == after.profiles.sorted(), "profiles changed: \(hex(bytes))")
    for other in before.profiles {
        precondition(
            outcome(before, other) == outcome(after, other),
            "profile \(other) changed by saving \(profile): \(hex(bytes))")
    }
    guard let old = try? JSONSerialization.jsonObject(with: Data(bytes)) as? [String: Any],
        let saved = try? Data(contentsOf: URL(fileURLWithPath: copy.configPath)),
        var new = try? JSONSerialization.jsonObject(with: saved) as? [String: Any]
    else {
        preconditionFailure("the saved file is not a JSON object: \(hex(bytes))")
    }
    var was: [String: Any] = old["profiles"] == nil ? ["profiles": ["default": ["tunnel": old]]] : old
    // The saved section is written as this version writes it; everything else must stay.
    was = withoutSection(was, profile.rawValue, role)
    new = withoutSection(new, profile.rawValue, role)
    // Compared as canonical JSON text (sorted keys): NSDictionary's isEqual does not see into
    // nested Swift dictionaries on Linux.
    let canonical = { (object: [String: Any]) in
        String(
            decoding: (try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])) ?? Data(),
            as: UTF8.self)
    }
    precondition(
        canonical(was) == canonical(new),
        "saving \(profile) lost or changed other keys: \(hex(bytes))\n\(canonical(was))\n\(canonical(new))")
}

/// `object` without its version and without `profiles.PROFILE.ROLE`.
private func withoutSection(_ object: [String: Any], _ profile: String, _ role: String) -> [String: Any] {
    var object = object
    object["version"] = nil
    var profiles = object["profiles"] as? [String: Any] ?? [:]
    var sections = profiles[profile] as? [String: Any] ?? [:]
    sections[role] = nil
    profiles[profile] = sections
    object["profiles"] = profiles
    return object
}

/// What `settings(of:)` says, as text to compare.
private func outcome(_ contents: ConfigFile.Contents, _ profile: ProfileName) -> String {
    do {
        return String(describing: try contents.settings(of: profile))
    } catch {
        // The copy's message names the copy's path.
        return "error "
            + (asFailure(error).errorDescription ?? "").replacingOccurrences(of: copy.configPath, with: home.configPath)
    }
}
