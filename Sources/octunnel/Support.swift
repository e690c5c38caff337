import ArgumentParser
import Foundation
import OCTunnelCore

/// `--home`, shared by every command: octunnel's directory (not the home machine, which is
/// `home up`'s; docs/architecture.md says which "home" is which).
struct DirectoryOptions: ParsableArguments {
    @Option(name: .long, help: ArgumentHelp("octunnel's directory (keys, known_hosts, config.json).", valueName: "DIR"))
    var home: String?

    var resolved: OctunnelHome { OctunnelHome.resolve(explicit: home) }

    /// The directory, created (0700) or checked first.
    func prepared() throws(OCTunnelError) -> OctunnelHome {
        let directory = resolved
        try directory.prepare()
        return directory
    }

    func validate() throws {
        try refuseControlCharacters(home, option: "--home")
    }
}

/// A path option with a line break or an escape code is refused (exit 64): no real path has
/// one, and it would be written into saved settings and service files.
func refuseControlCharacters(_ path: String?, option: String) throws {
    guard let path, UserPath.hasControlCharacters(path) else { return }
    throw ValidationError("\(option) \"\(OutsideText.shown(path))\" contains a control character (a line break or an escape code); give a path without one")
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
    } catch let error as OCTunnelError {
        Console.say("octunnel: \(error.localizedDescription)")
        throw ExitCode(error.exitStatus.rawValue)
    }
}

/// Parses a target argument in validate(), so mistakes exit 64 with the parser's own sentence.
func parseTarget(_ text: String) throws -> SSHTarget {
    do {
        return try SSHTarget.parse(text)
    } catch {
        throw ValidationError("bad target \"\(text)\": \(error.message) (expected [user@]host[:port], IPv6 as [::1]:2222)")
    }
}

/// Parses `-L` / `-R` forwards in validate(), so mistakes exit 64 with the parser's own sentence.
func parseForwards(_ texts: [String], direction: Forward.Direction, defaultBind: String) throws -> [Forward] {
    var forwards: [Forward] = []
    for text in texts {
        do {
            forwards.append(try Forward.parse(text, direction: direction, defaultBind: defaultBind))
        } catch {
            throw ValidationError(error.message)
        }
    }
    return forwards
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

/// `--profile`, on every command that reads or writes saved settings.
struct ProfileOptions: ParsableArguments {
    @Option(help: ArgumentHelp("The saved settings to use (default: $OCTUNNEL_PROFILE, else `default`).", valueName: "NAME"))
    var profile: String?

    func validate() throws { _ = try resolved }

    /// The profile named by `--profile` or `$OCTUNNEL_PROFILE`, else the default one.
    var resolved: ProfileName {
        get throws {
            do {
                return try ProfileName.resolve(explicit: profile)
            } catch {
                let source = (profile ?? "").isEmpty ? "OCTUNNEL_PROFILE: " : "--profile: "
                throw ValidationError(source + error.description)
            }
        }
    }

    /// Whether a profile was named (flag or environment).
    var isNamed: Bool { ProfileName.isNamed(explicit: profile) }
}
