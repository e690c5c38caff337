import Foundation

/// Everything `tunnel up` and `home up` tell their user: the engine's events, the health
/// test's, and the failure that ends the run. One printer turns them into text or JSON lines.
public enum UpEvent: Sendable {
    case engine(EngineEvent)
    case health(HealthEvent)
    /// A failure retrying cannot fix ended the run: a JSON line only (in text the CLI says
    /// `octunnel: …` as it does for every failure).
    case failed(any OCTunnelFailure)

    /// Whether the line is shown only with --verbose.
    public var isVerbose: Bool {
        if case .engine(let event) = self { return event.isVerbose }
        return false
    }

    /// One human line for stderr; nil when text mode says it elsewhere.
    public var text: String? {
        switch self {
        case .engine(let event): return event.text
        case .health(let event): return event.text
        case .failed: return nil
        }
    }

    /// The event as a JSON object (docs/cli.md, "--json events").
    public var jsonObject: [String: Any] {
        switch self {
        case .engine(let event): return event.jsonObject
        case .health(let event): return event.jsonObject
        case .failed(let error):
            return [
                "event": "error", "status": "error", "message": error.localizedDescription,
                "exitCode": Int(error.exitStatus.rawValue),
            ]
        }
    }
}
