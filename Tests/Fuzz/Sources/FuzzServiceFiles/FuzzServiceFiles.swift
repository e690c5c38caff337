import Foundation
import FuzzSupport
import OCTunnelCore

/// What the home machine's files and the far side say choose nothing (issue 46): OpenCode 2's
/// registration and settings files (and what stands at their paths: a link, a FIFO, a file
/// others may write), as `home up` reads them, and the pair port chosen from `/api/info`.
///
/// Input: a flags byte, then the registration, the settings, an `/api/info` body and a home host
/// the user gave, separated by `\n--\n`. Flags: 1 the registration is a symbolic link to the
/// text, 2 it is mode 0666, 4 the settings path is a FIFO, 8 the home host is given.
///
/// Promises: the chosen address is loopback or the home host given; a password is used only with
/// the address of the file it came from (the registration's own, or the settings' when both name
/// one port); every line told is clean; the pair port taken by itself is one of OpenCode's own.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = input(data, size)
    guard let flags = bytes.first else { return 0 }
    var parts = split(Array(bytes.dropFirst()), on: Array("\n--\n".utf8))
    while parts.count < 4 { parts.append([]) }
    let state = scratchDirectory + "/state/opencode", config = scratchDirectory + "/config/opencode"
    for directory in [state, config] {
        try? FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
    }
    let registration = state + "/service.json", settings = config + "/service.json",
        target = scratchDirectory + "/target.json"
    for path in [registration, settings, target] { unlink(path) }
    if flags & 1 != 0 {
        writeFile(parts[0], to: target)
        symlink(target, registration)
    } else if !parts[0].isEmpty {
        writeFile(parts[0], to: registration)
        if flags & 2 != 0 { chmod(registration, 0o666) }
    }
    if flags & 4 != 0 { mkfifo(settings, 0o600) } else if !parts[1].isEmpty { writeFile(parts[1], to: settings) }
    let given = flags & 8 != 0 ? String(decoding: parts[3], as: UTF8.self) : nil

    let files = OpenCodeServiceFiles(
        environment: ["XDG_STATE_HOME": scratchDirectory + "/state", "XDG_CONFIG_HOME": scratchDirectory + "/config"],
        userHome: scratchDirectory)
    let (service, problems) = files.find(allowedHost: given) { $0 % 2 == 0 }
    for problem in problems {
        precondition(isShownClean(OutsideText.shown(problem.text)), "problem \(hex(problem.text))")
    }
    if let service {
        let host = service.address.host
        precondition(
            Sockets.isLoopback(host) || host.lowercased() == "localhost" || host.lowercased() == given?.lowercased(),
            "an address off this machine: \(hex(host)) from \(hex(bytes))")
        precondition(flags & 1 == 0 || service.registration == nil, "a linked registration was followed: \(hex(bytes))")
        if service.password != nil {
            let fromRegistration = service.passwordFile == service.registration && service.registration != nil
            let fromSettings = service.passwordFile?.hasSuffix("config/opencode/service.json") == true
            precondition(fromRegistration || fromSettings, "a password from nowhere: \(hex(bytes))")
            if fromSettings, service.registration != nil, let text = String(bytes: parts[1], encoding: .utf8),
                let object = try? JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any]
            {
                let port =
                    (object["port"] as? NSNumber)?.intValue ?? OpenCodeServiceFiles.defaultPort(channel: "latest")
                precondition(port == service.address.port, "the settings' password sent to another port: \(hex(bytes))")
            }
        }
    }
    let choice = HomeOpenCode.choose(
        configured: HostPort(host: "127.0.0.1", port: 4096), portGiven: false, files: files
    ) { _ in false }
    for line in choice.lines { precondition(isShownClean(line), "line \(hex(line))") }

    let serverPort = OpenCodeAnswer.serverPort(info: parts[2])
    let report = HealthReport(
        version: "2", generation: .two, healthPath: "/api/info", eventsPath: "/api/event", healthMilliseconds: 0,
        eventsMilliseconds: 0, serverPort: serverPort)
    if case .listen(let port)? = PairPort.plan(for: report, localPort: 4096, choice: .automatic) {
        precondition(PairPort.openCodePorts.contains(port), "the far side chose port \(port): \(hex(parts[2]))")
    }
    return 0
}

/// `bytes` cut at each `separator`.
private func split(_ bytes: [UInt8], on separator: [UInt8]) -> [[UInt8]] {
    var parts: [[UInt8]] = []
    var start = 0, index = 0
    while index + separator.count <= bytes.count {
        if Array(bytes[index..<index + separator.count]) == separator {
            parts.append(Array(bytes[start..<index]))
            index += separator.count
            start = index
        } else {
            index += 1
        }
    }
    parts.append(Array(bytes[start...]))
    return parts
}
