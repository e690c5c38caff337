import Foundation

/// The status object as it crosses the status socket (`StatusSnapshot.jsonText` writes it), every
/// field optional: a version before or after this one may lack a field, and `null` reads as
/// absent. `StatusSnapshot(jsonText:)` decodes this, then checks it into a snapshot.
struct StatusWire: Decodable {
    /// One item of `forwards`: `listen` and `target`, or (a status from before them) `local`
    /// and `remote`; its counters.
    struct ForwardItem: Decodable {
        var listen: String?, target: String?, local: String?, remote: String?
        var openCode: Bool?
        var openConnections: Int?, totalConnections: Int?, bytesIn: Int?, bytesOut: Int?
        var lastError: String?
    }

    /// The last health test.
    struct HealthItem: Decodable {
        var ok: Bool?
        var version: String?
        var checkedAt: String?
        var detail: String?
    }

    /// One of the last notifications.
    struct NotifiedItem: Decodable {
        var kind: String?, text: String?, at: String?
    }

    var role: String?, profile: String?, state: String?, target: String?
    var pid: Int?
    var hostKey: String?, hostKeyType: String?, cipher: String?, mac: String?, kex: String?
    var clientKey: String?, clientKeyFile: String?
    var connectedSince: String?
    var retryIn: Double?
    var local: String?, localHosts: [String]?, remote: String?
    var openConnections: Int?, totalConnections: Int?, bytesIn: Int?, bytesOut: Int?
    var reconnects: Int?, stalls: Int?
    var sessions: Int?, sessionsDraining: Int?, burstSessions: Int?, burstSessionConnections: Int?
    var lastError: String?, lastErrorAt: String?, lastNetworkEvent: String?, lastNetworkEventAt: String?
    var forwards: [ForwardItem]?
    var health: HealthItem?
    var notifications: [NotifiedItem]?
    var permissionsWaiting: Int?

    /// `text` decoded; nil when it is not JSON or not a status object's shape.
    init?(jsonText text: String) {
        guard let decoded = try? JSONDecoder().decode(Self.self, from: Data(text.utf8)) else { return nil }
        self = decoded
    }
}
