/// A section whose old keys (`OldForwardKeys`, the copy older versions read) say something else
/// than its `forwardList` (the truth): a hand edit of the copy, refused rather than ignored.
struct ForwardListMismatch: Error, Equatable {
    let key: String
    /// The key's value in the file.
    let saved: String
    /// What `forwardList` says in its place, as the file writes it.
    let listed: String

    /// The reason `badConfig` gives, its keys named at `prefix` (`profiles.work.tunnel.`); the
    /// file's text escaped (`OutsideText`).
    func reason(at prefix: String) -> String {
        "\"\(prefix)\(key)\" is \(OutsideText.shown(saved, limit: 200)) but \"\(prefix)forwardList\" says \(OutsideText.shown(listed, limit: 200)): "
            + "forwardList is what octunnel reads, \(key) only its copy for older versions; edit forwardList, or remove it to read \(key)"
    }

    /// The forwards beside OpenCode's as a message writes them (`none` for none).
    static func texts(_ forwards: [Forward]) -> String {
        forwards.isEmpty ? "none" : forwards.map(\.specification).joined(separator: ", ")
    }
}
