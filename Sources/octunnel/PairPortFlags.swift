import ArgumentParser
import OCTunnelCore

/// `tunnel up`'s choice of the port OpenCode 2's pair links name (`PairPortChoice`).
struct PairPortFlags: ParsableArguments {
    @Option(
        help: ArgumentHelp(
            "Also listen on this port for OpenCode 2's `opencode pair` links: "
                + "auto (default, or as saved) takes the home server's own port "
                + "when it is one of OpenCode's (49374, 49375, 4096); N (1024-65535) takes N whatever the far side says.",
            valueName: "auto|N"))
    var pairPort: String?

    @Flag(help: "Never listen on the port pair links name.")
    var noPairPort = false

    func validate() throws {
        if noPairPort && pairPort != nil { throw ValidationError("--pair-port and --no-pair-port: pick one") }
        _ = try choice()
    }

    /// `--pair-port auto|N` or `--no-pair-port`, parsed (nil: neither given).
    func choice() throws -> PairPortChoice? {
        if noPairPort { return .off }
        guard let pairPort else { return nil }
        do {
            return try PairPortChoice.parse(pairPort)
        } catch {
            throw ValidationError(error.message)
        }
    }
}
