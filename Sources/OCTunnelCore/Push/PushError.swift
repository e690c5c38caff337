import Foundation

/// What can go wrong pushing to a phone through ntfy, each with one sentence and its exit code.
/// Messages name the server, never a topic in full (a topic is who may read and answer) nor the
/// token.
public enum PushError: OCTunnelFailure, Equatable {
    /// The push to the phone; a settings failure keeps its own room's layer.
    public static let roomLayer = "push"

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

    /// Each case's exit code and one sentence with the next step; what the server said is shown
    /// bounded (`OutsideText`).
    public var details: FailureDetails {
        switch self {
        case .badURL(let text, let reason):
            FailureDetails(
                .usage,
                "bad push URL \"\(text)\": \(reason). Give an ntfy server and topic, e.g. https://ntfy.example.org/mytopic."
            )
        case .certificateNotVerified(let url, let detail):
            FailureDetails(
                .pushCertificate,
                """
                the push server \(url) presented a certificate that does not verify (\(Self.shown(detail))); \
                nothing was sent. For a self-hosted server with its own CA, give that CA with --push-ca-file PATH.
                """)
        case .transport(let url, let detail):
            FailureDetails(.unavailable, "cannot reach the push server \(url): \(Self.shown(detail)).")
        case .timedOut(let url):
            FailureDetails(.unavailable, "the push server \(url) did not answer in time.")
        case .answerTooLarge(let url, let limit):
            FailureDetails(.unavailable, "the push server \(url) answered more than \(limit) bytes; it was not read.")
        case .silent(let url, let seconds):
            FailureDetails(
                .unavailable,
                "the push server \(url) sent nothing for \(seconds) s on the reply stream; reading it again.")
        case .ended(let url):
            FailureDetails(.unavailable, "the push server \(url) ended the reply stream; reading it again.")
        case .status(let url, let status, let body):
            FailureDetails(
                .unavailable,
                "the push server \(url) answered HTTP \(status)\(body.isEmpty ? "" : ": \(Self.shown(body))").")
        case .tokenRefused(let url, let status, let hasToken):
            FailureDetails(.permission, Self.tokenRefused(url, status, hasToken: hasToken))
        case .notNtfy(let url, let detail):
            FailureDetails(
                .unavailable, "\(url) answered, but not as an ntfy server does (\(Self.shown(detail))): check the URL.")
        case .noTokenFile(let path):
            FailureDetails(.noInput, "no push token file at \(path): check --push-token-file.")
        case .unsafeTokenFile(let path, let mode):
            FailureDetails(
                .permission,
                """
                push token file \(path) is readable by others (mode \(String(mode, radix: 8))); \
                octunnel refuses it, as ssh refuses such keys. Fix: chmod 600 \(path)
                """)
        case .badTokenFile(let path, let reason):
            FailureDetails(.dataError, "cannot use push token file \(path): \(reason).")
        case .notSetUp(let profile):
            FailureDetails(
                .noInput,
                "no push set up\(profile.isDefault ? "" : " for profile \(profile)"): run `octunnel push setup URL` first."
            )
        case .notTapped(let seconds):
            FailureDetails(
                .pushNotAnswered,
                """
                the test push was sent, but no button was tapped within \(seconds) s: \
                check that the phone subscribes to the address `push setup` printed.
                """)
        case .settings(let error):
            error.details
        }
    }

    /// What the push server sent, bounded and made safe to print.
    private static func shown(_ detail: String) -> String { OutsideText.shown(detail, limit: 200) }

    /// The server refused the token octunnel gave, or wants one and none was given.
    private static func tokenRefused(_ url: String, _ status: Int, hasToken: Bool) -> String {
        hasToken
            ? """
            the push server \(url) refused the access token (HTTP \(status)): check --push-token-file \
            and the token's access to both topics (`ntfy access` on the server).
            """
            : """
            the push server \(url) wants an access token (HTTP \(status)): \
            make one (`ntfy token add USER` on the server) and give it with --push-token-file PATH.
            """
    }
}
