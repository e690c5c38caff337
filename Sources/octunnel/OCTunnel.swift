import ArgumentParser
import OCTunnelCore

@main
struct OCTunnel: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "octunnel",
        abstract: "Reach a home OpenCode server through a VPS over SSH.",
        discussion: ExitStatus.helpSummary,
        version: OCTunnelVersion.described,
        subcommands: [
            Keygen.self, Pubkey.self, Authorize.self, KeysCommand.self, Trust.self, Tunnel.self, HomeCommand.self,
            PermissionCommand.self, PushCommand.self, Config.self, Service.self,
        ]
    )

    static func main() {
        OpenSSLProcess.prepare()
        main(nil)
    }
}
