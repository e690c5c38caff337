import Foundation

/// octunnel's own files and directory (config.json, its home, any file it writes or reads).
/// Each case carries its own exit code, layer and words (`OCTunnelFailure`).
public enum LocalFileError: OCTunnelFailure, Equatable {
    /// Every failure here is in octunnel's own files.
    public static let roomLayer = "local files"

    case noSettings(path: String, profile: ProfileName = .default, role: Role = .tunnel)
    case unsafeHome(path: String, reason: String)
    case badConfig(path: String, reason: String)
    case cannotWrite(path: String, reason: String)
    case cannotRead(path: String, reason: String)

    /// Each case's exit code and one sentence with the next step.
    public var details: FailureDetails {
        switch self {
        case .noSettings(let path, let profile, let role):
            let named = profile.isDefault ? "" : " for profile \(profile)"
            let option = profile.isDefault ? "" : " --profile \(profile)"
            let which = role == .tunnel ? "" : "\(role) "
            return FailureDetails(
                .noInput, "no saved \(which)settings\(named) in \(path): run `\(role.saveCommand)\(option)` first.")
        case .unsafeHome(let path, let reason):
            return FailureDetails(.permission, "refusing octunnel home \(path): \(reason).")
        case .badConfig(let path, let reason):
            return FailureDetails(
                .dataError, "settings file \(path) is not valid (\(reason)); it was left untouched: fix or remove it.")
        case .cannotWrite(let path, let reason):
            return FailureDetails(.cannotCreate, "cannot write \(path): \(reason).")
        case .cannotRead(let path, let reason):
            return FailureDetails(.dataError, "cannot read \(path): \(reason).")
        }
    }
}
