import Foundation

/// octunnel's own files and directory (config.json, its home, any file it writes or reads).
/// Each case carries its own exit code, layer and words (`OCTunnelFailure`).
public enum LocalFileError: OCTunnelFailure, Equatable {
    case noSettings(path: String, profile: ProfileName = .default, role: Role = .tunnel)
    case unsafeHome(path: String, reason: String)
    case badConfig(path: String, reason: String)
    case cannotWrite(path: String, reason: String)
    case cannotRead(path: String, reason: String)

    /// The documented exit code for this failure.
    public var exitStatus: ExitStatus {
        switch self {
        case .noSettings: .noInput
        case .unsafeHome: .permission
        case .badConfig, .cannotRead: .dataError
        case .cannotWrite: .cannotCreate
        }
    }

    /// The layer of the path that failed, for diagnosis output.
    public var layer: String {
        "local files"
    }

    /// One sentence with the next step.
    public var errorDescription: String? {
        switch self {
        case .noSettings(let path, let profile, let role):
            let named = profile.isDefault ? "" : " for profile \(profile)"
            let option = profile.isDefault ? "" : " --profile \(profile)"
            return
                "no saved \(role == .tunnel ? "" : "\(role) ")settings\(named) in \(path): run `\(role.saveCommand)\(option)` first."
        case .unsafeHome(let path, let reason):
            return "refusing octunnel home \(path): \(reason)."
        case .badConfig(let path, let reason):
            return "settings file \(path) is not valid (\(reason)); it was left untouched: fix or remove it."
        case .cannotWrite(let path, let reason):
            return "cannot write \(path): \(reason)."
        case .cannotRead(let path, let reason):
            return "cannot read \(path): \(reason)."
        }
    }
}
