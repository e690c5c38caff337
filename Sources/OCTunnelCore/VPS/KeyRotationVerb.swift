import Foundation

/// The verbs a key line's forced command answers to replace its own key (issue 47, "keys for
/// life"): sent by the OLD key as its `SSH_ORIGINAL_COMMAND`, the only input the program takes
/// from the client. `KeyRotationProgram` is what runs them on the VPS; each prints one
/// `AuthorizedKeysReport` line. A line can only ever put one successor of itself next to itself,
/// of its own type, with its own options, and take itself away once that successor is there.
public enum KeyRotationVerb {
    /// `octunnel-rotate-add TAG TYPE BLOB`: writes the line for the new key right after the
    /// caller's own (`added`), or finds it there already (`present`).
    public static let add = "octunnel-rotate-add"
    /// `octunnel-rotate-retire`: removes the caller's own line, once its successor is there (`retired`).
    public static let retire = "octunnel-rotate-retire"

    /// The command the old key sends to add `newKey`: `octunnel-rotate-add TAG TYPE BLOB`,
    /// the tag being `OctunnelKeyLine.tag(for: newKey)` (the program checks it against the blob).
    public static func addCommand(for newKey: SSHPublicKey) -> String {
        "\(add) \(OctunnelKeyLine.tag(for: newKey)) \(newKey.type) \(Data(newKey.blob).base64EncodedString())"
    }
}
