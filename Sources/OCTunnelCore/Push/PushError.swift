import Foundation

/// What can go wrong pushing to a phone through ntfy, each with one sentence and its exit code.
/// Messages name the server, never a topic in full (a topic is who may read and answer) nor the
/// token.
public enum PushError: Error, LocalizedError, Equatable, Sendable {
    /// `--push URL` or `push setup URL` is not an ntfy URL octunnel takes.
    case badURL(text: String, reason: String)
    /// The server's certificate (or its host name) did not verify; nothing was sent.
    case certificateNotVerified(url: String, detail: String)
    /// The server could not be reached or the transfer failed (libcurl's words).
    case transport(url: String, detail: String)
    case timedOut(url: String)
    case answerTooLarge(url: String, limit: Int)
    /// A reply stream that stayed silent past its keepalives (it is read again).
    case silent(url: String, seconds: Int)
    /// A reply stream the server ended (it is read again).
    case ended(url: String)
    /// The server answered with an HTTP status octunnel did not ask for.
    case status(url: String, status: Int, body: String)
    /// The server refused the access token (or wants one): 401 or 403.
    case tokenRefused(url: String, status: Int, hasToken: Bool)
    /// The server answered, but not as ntfy does.
    case notNtfy(url: String, detail: String)
    case noTokenFile(path: String)
    case unsafeTokenFile(path: String, mode: UInt16)
    case badTokenFile(path: String, reason: String)
    /// `push test` (or a profile's push) before `push setup`.
    case notSetUp(profile: ProfileName)
    /// `push test`: the push went out but no button was tapped within the wait.
    case notTapped(seconds: Int)
    /// Reading or saving the settings failed.
    case settings(AnyFailure)

    /// The documented exit code for this failure.
    public var exitStatus: ExitStatus {
        switch self {
        case .badURL: .usage
        case .certificateNotVerified: .pushCertificate
        case .transport, .timedOut, .answerTooLarge, .silent, .ended, .status, .notNtfy: .unavailable
        case .tokenRefused, .unsafeTokenFile: .permission
        case .noTokenFile, .notSetUp: .noInput
        case .badTokenFile: .dataError
        case .notTapped: .pushNotAnswered
        case .settings(let error): error.exitStatus
        }
    }

    public var errorDescription: String? {
        switch self {
        case .badURL(let text, let reason):
            return
                "bad push URL \"\(text)\": \(reason). Give an ntfy server and topic, e.g. https://ntfy.example.org/mytopic."
        case .certificateNotVerified(let url, let detail):
            return
                "the push server \(url) presented a certificate that does not verify (\(OutsideText.shown(detail, limit: 200))); "
                + "nothing was sent. For a self-hosted server with its own CA, give that CA with --push-ca-file PATH."
        case .transport(let url, let detail):
            return "cannot reach the push server \(url): \(OutsideText.shown(detail, limit: 200))."
        case .timedOut(let url):
            return "the push server \(url) did not answer in time."
        case .answerTooLarge(let url, let limit):
            return "the push server \(url) answered more than \(limit) bytes; it was not read."
        case .silent(let url, let seconds):
            return "the push server \(url) sent nothing for \(seconds) s on the reply stream; reading it again."
        case .ended(let url):
            return "the push server \(url) ended the reply stream; reading it again."
        case .status(let url, let status, let body):
            return
                "the push server \(url) answered HTTP \(status)\(body.isEmpty ? "" : ": \(OutsideText.shown(body, limit: 200))")."
        case .tokenRefused(let url, let status, let hasToken):
            return hasToken
                ? "the push server \(url) refused the access token (HTTP \(status)): check --push-token-file "
                    + "and the token's access to both topics (`ntfy access` on the server)."
                : "the push server \(url) wants an access token (HTTP \(status)): make one (`ntfy token add USER` on the server) "
                    + "and give it with --push-token-file PATH."
        case .notNtfy(let url, let detail):
            return
                "\(url) answered, but not as an ntfy server does (\(OutsideText.shown(detail, limit: 200))): check the URL."
        case .noTokenFile(let path):
            return "no push token file at \(path): check --push-token-file."
        case .unsafeTokenFile(let path, let mode):
            return
                "push token file \(path) is readable by others (mode \(String(mode, radix: 8))); "
                + "octunnel refuses it, as ssh refuses such keys. Fix: chmod 600 \(path)"
        case .badTokenFile(let path, let reason):
            return "cannot use push token file \(path): \(reason)."
        case .notSetUp(let profile):
            return
                "no push set up\(profile.isDefault ? "" : " for profile \(profile)"): run `octunnel push setup URL` first."
        case .notTapped(let seconds):
            return
                "the test push was sent, but no button was tapped within \(seconds) s: "
                + "check that the phone subscribes to the address `push setup` printed."
        case .settings(let error):
            return error.errorDescription
        }
    }
}
