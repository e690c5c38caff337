/// Memory a secret is read into (a passphrase typed at the terminal, an askpass program's
/// answer): the layer above hands it down (`SecretBuffer`, which wipes itself), System/ only
/// fills it from its start, so the bytes never pass through a String (issue 49: System/ knows
/// nothing above it).
protocol SecretStorage: AnyObject {
    /// How many bytes it holds at most.
    var count: Int { get }
    /// The byte at `index` (below `count`).
    subscript(index: Int) -> UInt8 { get set }
}

/// Why the terminal could not be read: System/'s own error (the layer above words it).
struct TerminalFailure: Error, Sendable {
    let reason: String
}
