/// What one failure is to the user, said once per case: its exit code, its words and, where a case
/// differs from the rest of its room, its layer (`OCTunnelFailure.details` builds one in one switch).
public struct FailureDetails: Sendable, Equatable {
    /// The documented exit code (the table in `ExitStatus`, rendered into docs/cli.md).
    public let exitStatus: ExitStatus
    /// One sentence with the next step.
    public let words: String
    /// The layer of the path that failed, when not the room's own (`OCTunnelFailure.roomLayer`).
    public let layer: String?

    /// `exitStatus` and `words`; `layer` only where this case is not in its room's usual layer.
    public init(_ exitStatus: ExitStatus, _ words: String, layer: String? = nil) {
        self.exitStatus = exitStatus
        self.words = words
        self.layer = layer
    }
}
