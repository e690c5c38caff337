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
                    var object = saved.shown
                    object["profile"] = name.rawValue
                    Console.data(jsonLine(object))
                } else {
                    let all = try SavedSettings.all(in: home)
                    guard !all.isEmpty else { throw OCTunnelError.noSettings(path: home.configPath) }
                    var profiles: [String: Any] = [:]
                    for (name, saved) in all { profiles[name.rawValue] = saved.shown }
                    Console.data(jsonLine(["profiles": profiles]))
                }
            }
        }
    }
}
