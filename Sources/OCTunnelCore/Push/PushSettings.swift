import Foundation

/// A profile's push to a phone, as `push setup` saves it in config.json beside the profile's
/// `tunnel` and `home` sections (`profiles.NAME.push`), read by both ends:
///
///     "push": {"url": "https://ntfy.example.org/oc-…", "replyTopic": "oc-reply-…",
///              "tokenFile": "/home/me/.octunnel/ntfy-token", "caFile": null, "detail": "brief"}
///
/// The token itself is never saved here: only the path of the file that holds it.
public struct PushSettings: Codable, Sendable, Equatable {
    /// The server and the topic the phone subscribes to.
    public var url: PushURL
    /// The topic the buttons post to and octunnel reads (random, never shown in full).
    public var replyTopic: String
    public var tokenFile: String?
    public var caFile: String?
    public var detail: PushDetail

    /// The key of the section in a profile.
    public static let key = "push"

    public init(
        url: PushURL, replyTopic: String, tokenFile: String? = nil, caFile: String? = nil, detail: PushDetail = .brief
    ) {
        (self.url, self.replyTopic, self.tokenFile, self.caFile, self.detail) = (
            url, replyTopic, tokenFile, caFile, detail
        )
    }

    /// The reply topic's URL.
    public var replyURL: PushURL { url.with(topic: replyTopic) }

    /// A new topic name: `prefix` and 128 random bits in base32 (26 letters and digits), which no
    /// one guesses; whoever knows it can read (the push topic) or answer (the reply topic).
    public static func newTopic(prefix: String) -> String {
        let alphabet = Array("abcdefghijklmnopqrstuvwxyz234567")
        var generator = SystemRandomNumberGenerator()
        var bits = (
            UInt64.random(in: .min ... .max, using: &generator), UInt64.random(in: .min ... .max, using: &generator)
        )
        var name = prefix
        for _ in 0..<26 {
            name.append(alphabet[Int(bits.0 & 31)])
            bits.0 = bits.0 >> 5 | bits.1 << 59
            bits.1 >>= 5
        }
        return name
    }

    /// The saved push of `profile` in `home`'s config.json; nil when none was set up.
    public static func load(directory: OctunnelDirectory, profile: ProfileName) throws(PushError) -> PushSettings? {
        let contents: ConfigFile.Contents?
        do { contents = try ConfigFile(directory: directory).read() } catch {
            throw .settings(.reading(directory.configPath, failed: error))
        }
        guard let section = contents?.section(PushSettings.key, of: profile) else { return nil }
        let path = directory.configPath
        guard section.members != nil else {
            throw .settings(
                AnyFailure(
                    LocalFileError.badConfig(path: path, reason: "profiles.\(profile.rawValue).push is not an object")))
        }
        do {
            let settings = try section.decoded(as: PushSettings.self)
            guard PushURL.isTopic(settings.replyTopic), settings.url.topic != nil else {
                throw CocoaError(.coderInvalidValue)
            }
            return settings
        } catch {
            throw .settings(
                AnyFailure(
                    LocalFileError.badConfig(
                        path: path,
                        reason: "profiles.\(profile.rawValue).push is not valid (run `octunnel push setup` again)")))
        }
    }

    /// What `config show` prints of `profile`'s saved push: the section as config.json holds it (the
    /// token file's path, never a token); nil when none was set up.
    public static func shown(directory: OctunnelDirectory, profile: ProfileName) throws -> [String: Any]? {
        let settings: PushSettings?
        do throws(PushError) { settings = try load(directory: directory, profile: profile) } catch {
            if case .settings(let inner) = error { throw inner.base }
            throw LocalFileError.badConfig(path: directory.configPath, reason: error.localizedDescription)
        }
        return settings.flatMap { (try? JSONValue(encoding: $0))?.members?.foundation }
    }

    /// Saves these settings as `profile`'s push, keeping everything else in the file.
    public func save(directory: OctunnelDirectory, profile: ProfileName) throws(PushError) {
        do { try ConfigFile(directory: directory).save(self, key: Self.key, profile: profile) } catch {
            throw .settings(AnyFailure(asFailure(error)))
        }
    }
}
