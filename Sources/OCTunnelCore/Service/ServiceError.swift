import Foundation

/// Installing, removing or asking about the systemd or launchd service.
/// Each case carries its own exit code, layer and words (`OCTunnelFailure`).
public enum ServiceError: OCTunnelFailure, Equatable {
    /// The service's files; the service manager's own failure is in "service manager".
    public static let roomLayer = "local files"

    case serviceFileNotOurs(path: String, edited: Bool, removing: Bool)
    case serviceNotInstalled(path: String, role: Role, profile: ProfileName)
    case serviceManagerFailed(command: String, detail: String)
    /// A path with a line break or escape code where it would be written into a file (a service unit).
    case controlCharactersInPath(what: String, path: String)

    /// Each case's exit code, one sentence with the next step, and its layer where not the files'.
    public var details: FailureDetails {
        switch self {
        case .serviceFileNotOurs(let path, let edited, let removing):
            let why =
                edited
                ? "was changed since `octunnel service install` wrote it"
                : "was not written by `octunnel service install`"
            return FailureDetails(
                .cannotCreate,
                removing
                    ? "\(path) \(why); it was left in place. Remove it yourself, or with --force."
                    : "\(path) \(why); it was left untouched. Move it away, or replace it with --force.")
        case .serviceNotInstalled(let path, let role, let profile):
            let option = profile.isDefault ? "" : " --profile \(profile)"
            return FailureDetails(
                .noInput, "not installed (no \(path)): run `octunnel service install \(role)\(option)`.")
        case .serviceManagerFailed(let command, let detail):
            return FailureDetails(
                .unavailable,
                """
                `\(command)` failed (\(detail)); the service file is in place: \
                run that command yourself where the service manager is reachable.
                """, layer: "service manager")
        case .controlCharactersInPath(let what, let path):
            return FailureDetails(
                .usage,
                """
                \(what) "\(OutsideText.shown(path))" contains a control character (a line break or an escape code); \
                octunnel will not write it into a service file. Use a path without one.
                """)
        }
    }
}
