/// An ntfy access token (`tk_…`), read from `--push-token-file` as a key is: a regular file only
/// its owner can read, one line. Sent only as `Authorization: Bearer` to the push server (and
/// inside the buttons, where every subscriber sees it: docs/security.md); never printed.
public enum PushToken {
    /// The token in `path`.
    public static func read(_ path: String) throws(PushError) -> String {
        do {
            return try OpenCodeCredentials.readPasswordFile(path)
        } catch {
            switch error {
            case PasswordFileError.noPasswordFile: throw .noTokenFile(path: path)
            case PasswordFileError.unsafePasswordFile(_, let mode, _): throw .unsafeTokenFile(path: path, mode: mode)
            case PasswordFileError.badPasswordFile(_, let reason): throw .badTokenFile(path: path, reason: reason)
            default: throw .settings(.reading(path, failed: error))
            }
        }
    }

    /// The header that carries `token`, if any.
    static func headers(_ token: String?) -> [(String, String)] {
        token.map { [("Authorization", "Bearer \($0)")] } ?? []
    }
}
