/// A launchd LaunchAgent that starts a `LoginService` at login and keeps it running. launchd
/// cannot exempt exit codes from `KeepAlive`, so a failure retrying cannot fix is retried every
/// `ThrottleInterval` seconds (and logged each time, where `logPath` says).
struct LaunchAgent {
    let service: LoginService

    /// The plist's lines, its comments first after the XML declaration and doctype.
    var lines: [String] {
        var lines = [
            #"<?xml version="1.0" encoding="UTF-8"?>"#,
            #"<!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">"#,
        ]
        lines += service.comments.map { "<!-- \(Self.escape($0, comment: true)) -->" }
        lines += [
            #"<plist version="1.0">"#,
            "<dict>",
            "    <key>Label</key>",
            "    <string>\(Self.escape(service.label))</string>",
            "    <key>ProgramArguments</key>",
            "    <array>",
        ]
        lines += service.arguments.map { "        <string>\(Self.escape($0))</string>" }
        lines += ["    </array>", "    <key>RunAtLoad</key>", "    <true/>"]
        if service.oneShot {
            // Run at load, then every `interval` seconds; never kept alive.
            lines += ["    <key>StartInterval</key>", "    <integer>\(service.interval ?? 86400)</integer>"]
        } else {
            lines += [
                "    <key>KeepAlive</key>", "    <true/>", "    <key>ThrottleInterval</key>",
                "    <integer>5</integer>",
            ]
        }
        if let logPath = service.logPath {
            lines += [
                "    <key>StandardOutPath</key>",
                "    <string>\(Self.escape(logPath))</string>",
                "    <key>StandardErrorPath</key>",
                "    <string>\(Self.escape(logPath))</string>",
            ]
        }
        return lines + ["</dict>", "</plist>", ""]
    }

    /// XML text escaping; inside a comment `--` is not allowed either. Tab, LF and CR become
    /// character references (`&#10;`), so a path keeps them and the file keeps one element a
    /// line; `ServiceDefinition.validate` refuses the other controls, which XML 1.0 cannot hold.
    static func escape(_ text: String, comment: Bool = false) -> String {
        var escaped = text.replacingScalars("&", with: "&amp;").replacingScalars("<", with: "&lt;")
            .replacingScalars(">", with: "&gt;")
        for (raw, reference) in [("\t", "&#9;"), ("\n", "&#10;"), ("\r", "&#13;")] {
            escaped = escaped.replacingScalars(raw, with: reference)
        }
        return comment ? escaped.replacingScalars("--", with: "- -") : escaped
    }
}
