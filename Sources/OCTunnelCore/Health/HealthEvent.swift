import Foundation

/// A health test's result as `tunnel up` (through the tunnel, after each connect) and `home up`
/// (straight to the home port, before listening) say it: one line of text or one JSON object,
/// and what `status` keeps of it.
public enum HealthEvent: Sendable {
    /// OpenCode answered through the tunnel to the VPS `host`; `password` says which source.
    case tunnelPassed(HealthReport, host: String, password: String)
    case tunnelFailed(any OCTunnelFailure)
    /// OpenCode answered on the home machine at `home`.
    case homePassed(HealthReport, home: HostPort, password: String)
    case homeFailed(any OCTunnelFailure, home: HostPort)

    /// One human line for stderr.
    public var text: String {
        switch self {
        case .tunnelPassed(let report, let host, _) where report.passwordAsked:
            return "health ✓ " + Self.passwordAsked(reached: "through \(host)")
        case .tunnelPassed(let report, let host, let password):
            return "health ✓ OpenCode \(report.version) (\(report.generation.label)) "
                + "healthy through \(host) (\(report.healthMilliseconds) ms), "
                + "event stream \(report.eventsPath) ready (\(report.eventsMilliseconds) ms), \(password)"
        case .tunnelFailed(let error):
            return "health ✗ \(error.localizedDescription)"
        case .homePassed(let report, let home, _) where report.passwordAsked:
            return "home health ✓ " + Self.passwordAsked(reached: "on \(home)")
        case .homePassed(let report, let home, let password):
            return "home health ✓ OpenCode \(report.version) (\(report.generation.label)) "
                + "on \(home), event stream \(report.eventsPath) ready, \(password)"
        case .homeFailed(let error, let home):
            return "home health ✗ on \(home): \(error.localizedDescription)"
        }
    }

    /// A pass where OpenCode 2 asked for a password `reached` somewhere: what was not checked, and how to.
    private static func passwordAsked(reached: String) -> String {
        "OpenCode 2 reached \(reached) (\(HealthReport.passwordAskedText)); \(HealthReport.passwordAskedFix)"
    }

    /// The `health` event as a JSON object (docs/cli.md).
    public var jsonObject: [String: Any] {
        switch self {
        case .tunnelPassed(let report, _, let password) where report.passwordAsked,
            .homePassed(let report, _, let password) where report.passwordAsked:
            var object: [String: Any] = [
                "event": "health", "status": "connected", "healthy": true, "api": report.generation.rawValue,
                "path": report.healthPath, "password": password, "passwordAsked": true,
                "unchecked": ["api", "events"], "message": "OpenCode 2 reached (\(HealthReport.passwordAskedText))",
            ]
            if case .homePassed(_, let home, _) = self {
                object["home"] = home.description
            } else {
                object["ms"] = report.healthMilliseconds
            }
            return object
        case .tunnelPassed(let report, _, let password):
            return [
                "event": "health", "status": "connected", "healthy": true, "version": report.version,
                "api": report.generation.rawValue, "path": report.healthPath, "eventsPath": report.eventsPath,
                "password": password, "ms": report.healthMilliseconds, "eventsMs": report.eventsMilliseconds,
            ]
        case .tunnelFailed(let error):
            return [
                "event": "health", "status": "error", "healthy": false, "layer": error.layer,
                "message": error.localizedDescription, "exitCode": Int(error.exitStatus.rawValue),
            ]
        case .homePassed(let report, let home, let password):
            return [
                "event": "health", "status": "connected", "healthy": true, "version": report.version,
                "api": report.generation.rawValue, "home": home.description, "password": password,
            ]
        case .homeFailed(let error, let home):
            return [
                "event": "health", "status": "error", "healthy": false, "layer": error.layer, "home": home.description,
                "message": error.localizedDescription, "exitCode": Int(error.exitStatus.rawValue),
            ]
        }
    }

    /// What `tunnel status` and `home status` show of it.
    public func record(checkedAt: Date) -> StatusSnapshot.Health {
        switch self {
        case .tunnelPassed(let report, let host, _) where report.passwordAsked:
            return .init(
                ok: true, version: nil, checkedAt: checkedAt,
                detail: "OpenCode 2 reached through \(host) (\(HealthReport.passwordAskedText))")
        case .homePassed(let report, let home, _) where report.passwordAsked:
            return .init(
                ok: true, version: nil, checkedAt: checkedAt,
                detail: "OpenCode 2 reached on \(home) (\(HealthReport.passwordAskedText))")
        case .tunnelPassed(let report, let host, _):
            return .init(
                ok: true, version: report.version, checkedAt: checkedAt,
                detail:
                    "OpenCode \(report.version) (\(report.generation.label)) through \(host), event stream \(report.eventsPath) ready"
            )
        case .homePassed(let report, let home, _):
            return .init(
                ok: true, version: report.version, checkedAt: checkedAt,
                detail: "OpenCode \(report.version) (\(report.generation.label)) on \(home)")
        case .tunnelFailed(let error), .homeFailed(let error, _):
            return .init(ok: false, version: nil, checkedAt: checkedAt, detail: error.localizedDescription)
        }
    }
}
