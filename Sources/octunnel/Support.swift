import ArgumentParser
import Foundation
import OCTunnelCore

/// A path option with a line break or an escape code is refused (exit 64): no real path has
/// one, and it would be written into saved settings and service files.
func refuseControlCharacters(_ path: String?, option: String) throws {
    guard let path, UserPath.hasControlCharacters(path) else { return }
    throw ValidationError(
        "\(option) \"\(OutsideText.shown(path))\" contains a control character (a line break or an escape code); give a path without one"
    )
}

/// Talk goes to stderr; stdout carries only data.
enum Console {
    static func say(_ text: String) {
        FileHandle.standardError.write(Data((text + "\n").utf8))
    }

    static func data(_ text: String) {
        FileHandle.standardOutput.write(Data((text + "\n").utf8))
    }
}

/// Runs a core operation, turning its error into one stderr line and its exit code.
func runReportingErrors(_ body: () throws -> Void) throws {
    do {
        try body()
    } catch let error as any OCTunnelFailure {
        throw reported(error.localizedDescription, error.exitStatus)
    }
}

/// Says an error's `description` as octunnel's one stderr line; the exit code `status` gives it.
func reported(_ description: String, _ status: ExitStatus) -> ExitCode {
    Console.say("octunnel: \(description)")
    return ExitCode(status.rawValue)
}

/// Parses a target argument in validate(), so mistakes exit 64 with the parser's own sentence.
func parseTarget(_ text: String) throws -> SSHTarget {
    do {
        return try SSHTarget.parse(text)
    } catch {
        throw ValidationError(
            "bad target \"\(text)\": \(error.message) (expected [user@]host[:port], IPv6 as [::1]:2222)")
    }
}

/// Checks a session's forwards together in validate() (`Forward.check`: a port twice, a listen
/// off loopback without --allow-lan), so `pubkey` refuses what `tunnel up` and `home up` refuse.
@discardableResult
func checkForwards(_ forwards: [Forward], allowLAN: Bool) throws -> [Forward] {
    do {
        try Forward.check(forwards, allowLAN: allowLAN)
    } catch {
        throw ValidationError(error.localizedDescription)
    }
    return forwards
}

func parseHostPort(_ text: String) throws -> HostPort {
    do {
        return try HostPort.parse(text)
    } catch {
        throw ValidationError("bad host \"\(text)\": \(error.message) (expected HOST[:PORT], IPv6 as [::1]:2222)")
    }
}

func checkPort(_ value: Int, _ name: String, allowZero: Bool = false) throws {
    guard (allowZero ? 0 : 1)...65535 ~= value else {
        throw ValidationError("\(name) \(value) is out of range (\(allowZero ? 0 : 1)-65535)")
    }
}
