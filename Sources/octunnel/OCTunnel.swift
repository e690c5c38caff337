import ArgumentParser
import OCTunnelCore

@main
struct OCTunnel: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "octunnel",
        abstract: "Reach a home OpenCode server through a VPS over SSH.",
        discussion: "Exit codes: 0 ok, 3 not running (status), 64 usage, 65 bad data in a file, 66 no key or settings yet, 69 unavailable, 73 would overwrite, 76 host key changed, 77 permission. See docs/cli.md.",
        version: "0.1.0",
        subcommands: [Keygen.self, Pubkey.self, Trust.self, Tunnel.self, HomeCommand.self, Config.self, Service.self]
    )
}
