import Foundation

/// How much a push tells (`--push-detail`): `brief` says only the kind of moment (a permission,
/// a question, finished, failed) and nothing the agent or the user wrote: no command, path,
/// session title or option; `full` says what a desktop notification says.
public enum PushDetail: String, Sendable, Codable, CaseIterable {
    case brief, full
}
