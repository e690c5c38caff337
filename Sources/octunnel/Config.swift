import ArgumentParser
import OCTunnelCore

struct Config: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Show the saved tunnel settings (saved by `tunnel up --save`).",
        subcommands: [Show.self]
    )

    struct Show: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Print config.json's settings as JSON (stdout).")

        @OptionGroup var home: HomeOptions

        func run() throws {
            try runReportingErrors {
                let home = self.home.resolved
                guard let saved = try SavedSettings.load(from: home) else {
                    throw OCTunnelError.noSettings(path: home.configPath)
                }
                Console.data(jsonLine(["host": saved.host, "port": saved.port, "username": saved.username,
                                       "remotePort": saved.remotePort, "localPort": saved.localPort, "homePort": saved.homePort,
                                       "remoteHost": saved.remoteHost ?? "127.0.0.1"]))
            }
        }
    }
}
