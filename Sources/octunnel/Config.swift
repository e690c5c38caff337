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
                    let saved = try SavedSettings.load(from: home, profile: name)
                    let push = try PushSettings.shown(directory: home, profile: name)
                    guard saved != nil || push != nil else {
                        throw LocalFileError.noSettings(path: home.configPath, profile: name)
                    }
                    var object = saved?.shown ?? [:]
                    object[PushSettings.key] = push
                    object["profile"] = name.rawValue
                    Console.data(jsonLine(object))
                } else {
                    var profiles: [String: Any] = [:]
                    for name in try ConfigFile(directory: home).load()?.profiles ?? [] {
                        var object = try SavedSettings.load(from: home, profile: name)?.shown ?? [:]
                        object[PushSettings.key] = try PushSettings.shown(directory: home, profile: name)
                        if !object.isEmpty { profiles[name.rawValue] = object }
                    }
                    guard !profiles.isEmpty else { throw LocalFileError.noSettings(path: home.configPath) }
                    Console.data(jsonLine(["profiles": profiles]))
                }
            }
        }
    }
}
