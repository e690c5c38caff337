import ArgumentParser
import OCTunnelCore

struct Config: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Show the saved settings (saved by `tunnel up --save`), per profile.",
        subcommands: [Show.self]
    )

    struct Show: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Print the saved settings as JSON (stdout): every profile, or the one --profile names."
        )

        @OptionGroup var directory: DirectoryOptions
        @OptionGroup var profile: ProfileOptions

        func run() throws {
            try runReportingErrors {
                let home = directory.resolved
                if profile.isNamed {
                    let name = try profile.resolved
                    guard let saved = try SavedSettings.load(from: home, profile: name) else {
                        throw OCTunnelError.noSettings(path: home.configPath, profile: name)
                    }
                    var object = Self.json(saved)
                    object["profile"] = name.rawValue
                    Console.data(jsonLine(object))
                } else {
                    let all = try SavedSettings.all(in: home)
                    guard !all.isEmpty else { throw OCTunnelError.noSettings(path: home.configPath) }
                    var profiles: [String: Any] = [:]
                    for (name, saved) in all { profiles[name.rawValue] = Self.json(saved) }
                    Console.data(jsonLine(["profiles": profiles]))
                }
            }
        }

        /// A profile's sections; an unsaved `remoteHost` shows as the default (127.0.0.1); `agent`, `homeHost`,
        /// `forwards` and `passwordFile` only when saved (the password file's path, never the password).
        static func json(_ saved: SavedSettings) -> [String: Any] {
            var object: [String: Any] = [:]
            if let tunnel = saved.tunnel {
                var section: [String: Any] = ["host": tunnel.host, "port": tunnel.port, "username": tunnel.username,
                                              "remotePort": tunnel.remotePort, "localPort": tunnel.localPort, "homePort": tunnel.homePort,
                                              "remoteHost": tunnel.remoteHost ?? Defaults.remoteHost]
                if tunnel.agent == true { section["agent"] = true }
                if let file = tunnel.passwordFile { section["passwordFile"] = file }
                if let forwards = tunnel.forwards { section["forwards"] = forwards }
                object["tunnel"] = section
            }
            if let home = saved.home {
                var section: [String: Any] = ["host": home.host, "port": home.port, "username": home.username,
                                              "remotePort": home.remotePort, "homePort": home.homePort,
                                              "remoteHost": home.remoteHost ?? Defaults.remoteHost]
                if let host = home.homeHost { section["homeHost"] = host }
                if home.agent == true { section["agent"] = true }
                if let file = home.passwordFile { section["passwordFile"] = file }
                object["home"] = section
            }
            return object
        }
    }
}
