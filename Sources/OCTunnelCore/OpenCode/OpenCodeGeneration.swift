import Foundation

/// One HTTP API generation OpenCode has shipped, as a value: its number for reports and JSON, and
/// the dialect (`OpenCodeDialect`) that answers every question whose answer differs between them.
///
/// Equal when their numbers are. `known` lists the ones octunnel speaks; a client that must try
/// them takes a list (default `known`), so another generation is one conformer, not an edit here.
public struct OpenCodeGeneration: Sendable, Equatable, CustomStringConvertible {
    /// What this generation says, and how.
    public let api: any OpenCodeDialect

    /// The generation spoken by `api`.
    public init(_ api: any OpenCodeDialect) { self.api = api }

    /// OpenCode 1.x (`packages/opencode`, Hono): `/global/health`, `/global/event`, `/event`.
    public static let one = OpenCodeGeneration(OpenCodeOne())
    /// OpenCode 2.x (`packages/protocol` + `packages/server`, Effect HttpApi): `/api/...`.
    public static let two = OpenCodeGeneration(OpenCodeTwo())
    /// The generations octunnel speaks, oldest first (the health routes are tried in this order,
    /// the pending lists newest first).
    public static let known: [OpenCodeGeneration] = [.one, .two]

    /// 1, 2: the major version, as `tunnel status` and the JSON events carry it (`"api"`).
    public var rawValue: Int { api.number }

    /// "API 1", "API 2": how reports name it.
    public var label: String { "API \(api.number)" }

    /// The event streams to try, in order, for this generation (`OpenCodeDialect.eventPaths`).
    public var eventPaths: [String] { api.eventPaths }

    public var description: String { label }

    public static func == (lhs: OpenCodeGeneration, rhs: OpenCodeGeneration) -> Bool {
        lhs.api.number == rhs.api.number
    }

    /// The generation among `generations` whose event streams include `path` (the one the health test found).
    public static func serving(
        eventPath path: String, among generations: [OpenCodeGeneration] = known
    ) -> OpenCodeGeneration? {
        generations.first { $0.eventPaths.contains(path) }
    }

    /// The generation among `generations` that names itself in a 401's `body` (2.x's tagged error), if any.
    static func naming(refusal body: [UInt8], among generations: [OpenCodeGeneration] = known) -> OpenCodeGeneration? {
        generations.first { $0.api.namesItself(refusal: body) }
    }
}
