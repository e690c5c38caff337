/// A section whose old keys (`OldForwardKeys`, the copy older versions read) say something else
/// than its `forwardList` (what a person edits, and what octunnel reads): the list wins, the
/// copy is rewritten to match, and this is said once as a warning, never a refusal.
struct ForwardListMismatch: Error, Equatable {
    let key: String
    /// The key's value in the file.
    let saved: String
    /// What `forwardList` says in its place, as the file writes it.
    let listed: String

    /// The warning's words, its keys named at `prefix` (`profiles.work.tunnel.`) in `path`; the
    /// file's text escaped (`OutsideText`).
    func warning(path: String, at prefix: String) -> String {
        "octunnel: warning: \(path): \"\(prefix)\(key)\" is \(OutsideText.shown(saved, limit: 200)) "
            + "but \"\(prefix)forwardList\" says \(OutsideText.shown(listed, limit: 200)): octunnel follows forwardList "
            + "(\(key) is only its copy for older versions) and rewrites the copy to match"
    }

    /// The forwards beside OpenCode's as a message writes them (`none` for none).
    static func texts(_ forwards: [Forward]) -> String {
        forwards.isEmpty ? "none" : forwards.map(\.specification).joined(separator: ", ")
    }
}
