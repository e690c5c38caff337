import ArgumentParser
import OCTunnelCore

/// A `-L` or `-R` argument, parsed once, as ArgumentParser reads it (`ForwardSpec`). A text
/// that is not a forward is kept with the parser's sentence, which `validate()` gives as the
/// usage error (exit 64): ArgumentParser would put its own words around it.
struct ForwardArgument<Side: ForwardSide>: ExpressibleByArgument, Sendable {
    let parsed: Result<ForwardSpec, TargetParseError>

    init?(argument: String) {
        parsed = Result { () throws(TargetParseError) in try ForwardSpec.parse(argument, direction: Side.direction) }
    }
}

/// Which end listens for a `ForwardArgument`: `-L` (`ListensHere`) or `-R` (`ListensOnVPS`).
protocol ForwardSide: Sendable {
    static var direction: Forward.Direction { get }
}

/// `-L`: this machine listens.
enum ListensHere: ForwardSide {
    static let direction = Forward.Direction.local
}

/// `-R`: the VPS listens.
enum ListensOnVPS: ForwardSide {
    static let direction = Forward.Direction.remote
}

extension Array {
    /// The forwards these arguments write, listening on `defaultBind` where they give no BIND;
    /// the first that is not a forward is a usage error (exit 64) with the parser's sentence.
    func forwards<Side>(defaultBind: String) throws -> [Forward] where Element == ForwardArgument<Side> {
        do throws(TargetParseError) {
            return try map { (argument) throws(TargetParseError) in
                try argument.parsed.get().forward(defaultBind: defaultBind)
            }
        } catch {
            throw ValidationError(error.message)
        }
    }
}
