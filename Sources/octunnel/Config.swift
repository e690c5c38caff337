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

        @OptionGroup var home: HomeOptions
        @OptionGroup var profile: ProfileOptions

        func run() throws {
            try runReportingErrors {
                let home = self.home.resolved
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

        /// A profile's sections; an unsaved `remoteHost` shows as 127.0.0.1.
        static func json(_ saved: SavedSettings) -> [String: Any] {
            var object: [String: Any] = [:]
            if let tunnel = saved.tunnel {
                object["tunnel"] = ["host": tunnel.host, "port": tunnel.port, "username": tunnel.username,
                                    "remotePort": tunnel.remotePort, "localPort": tunnel.localPort, "homePort": tunnel.homePort,
                                    "remoteHost": tunnel.remoteHost ?? "127.0.0.1"] as [String: Any]
            }
            if let home = saved.home {
                object["home"] = ["host": home.host, "port": home.port, "username": home.username,
                                  "remotePort": home.remotePort, "homePort": home.homePort,
                                  "remoteHost": home.remoteHost ?? "127.0.0.1"] as [String: Any]
            }
            return object
        }
    }
}
