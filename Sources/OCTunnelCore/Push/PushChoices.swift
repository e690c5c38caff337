import Foundation

/// The push choices typed on `tunnel up` and `home up` (`--push URL`, `--push-token-file`,
/// `--push-detail`, `--push-ca-file`; nil: not given), laid over the profile's saved `push`
/// section (what `push setup` wrote, the default of both ends), and saved there with `--save`
/// (so `service install` carries them).
public struct PushChoices: Sendable, Equatable {
    public var url: String?
    public var tokenFile: String?
    public var caFile: String?
    public var detail: PushDetail?

    public init(url: String? = nil, tokenFile: String? = nil, caFile: String? = nil, detail: PushDetail? = nil) {
        (self.url, self.tokenFile, self.caFile, self.detail) = (url, tokenFile, caFile, detail)
    }

    /// True when no push flag was given.
    public var isEmpty: Bool { self == PushChoices() }

    /// The run's push, or nil when neither typed nor saved: the typed URL (its reply topic kept from
    /// the saved push to the same topic, else a new random one; the saved token and CA files kept
    /// for the same server), else the saved push, with the typed
    /// file paths and detail over it; the token read from its file (as a key is: only its owner may
    /// read it). With `save` and a flag typed, the result becomes the profile's saved push.
    public func resolve(directory: OctunnelDirectory, profile: ProfileName, save: Bool) throws(PushError) -> PushRun? {
        let saved = try PushSettings.load(directory: directory, profile: profile)
        var settings: PushSettings
        if let url {
            let parsed = try PushURL.parse(url)
            guard parsed.topic != nil else {
                throw .badURL(
                    text: url, reason: "--push needs a topic (or run `octunnel push setup \(url)` to make one)")
            }
            let reply =
                saved.flatMap { $0.url == parsed ? $0.replyTopic : nil } ?? PushSettings.newTopic(prefix: "oc-reply-")
            // The saved token and CA belong to the saved server: kept for another topic on it only.
            let sameServer = saved?.url.serverRoot == parsed.serverRoot
            settings = PushSettings(
                url: parsed, replyTopic: reply, tokenFile: sameServer ? saved?.tokenFile : nil,
                caFile: sameServer ? saved?.caFile : nil, detail: saved?.detail ?? .brief)
        } else if let saved {
            settings = saved
        } else if isEmpty {
            return nil
        } else {
            throw .badURL(
                text: "", reason: "--push-token-file, --push-ca-file and --push-detail need --push URL or a saved push")
        }
        if let tokenFile { settings.tokenFile = UserPath.absolute(tokenFile) }
        if let caFile { settings.caFile = UserPath.absolute(caFile) }
        if let detail { settings.detail = detail }
        let token = try settings.tokenFile.map { path throws(PushError) in try PushToken.read(path) }
        if save && !isEmpty { try settings.save(directory: directory, profile: profile) }
        return PushRun(settings: settings, token: token)
    }
}

/// A run's push: its settings and the access token read from their file (nil: none).
public struct PushRun: Sendable, Equatable {
    public let settings: PushSettings
    public let token: String?
    /// True on `tunnel up`: a request's push waits a moment and is not sent when the other end
    /// (`home up`, beside OpenCode) already pushed it to the topic, so the phone shows it once.
    public var yields = false

    public init(settings: PushSettings, token: String?, yields: Bool = false) {
        (self.settings, self.token, self.yields) = (settings, token, yields)
    }
}
