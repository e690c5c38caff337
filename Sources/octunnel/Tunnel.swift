import ArgumentParser
import OCTunnelCore

struct Tunnel: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Run, check and describe the tunnel to the VPS.",
        subcommands: []
    )
}
