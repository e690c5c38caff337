import ArgumentParser
import OCTunnelCore

struct Config: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Show saved settings.",
        subcommands: []
    )
}
