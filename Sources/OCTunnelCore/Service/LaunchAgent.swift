/// A launchd LaunchAgent that starts a role at login and keeps it running, its output in
/// `~/Library/Logs/octunnel/`. launchd cannot exempt exit codes from `KeepAlive`, so a failure
/// retrying cannot fix is retried every `ThrottleInterval` seconds (and logged each time).
struct LaunchAgent {
    let definition: ServiceDefinition

    func render() -> String {
        var lines = [
            #"<?xml version="1.0" encoding="UTF-8"?>"#,
            #"<!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">"#,
            "<!-- \(Self.escape(definition.commentSafeHeader, comment: true)) -->",
            "<!-- octunnel never overwrites or removes this file once it is changed, unless forced. -->",
            #"<plist version="1.0">"#,
            "<dict>",
            "    <key>Label</key>",
            "    <string>\(Self.escape(definition.name))</string>",
            "    <key>ProgramArguments</key>",
            "    <array>",
        ]
        lines += definition.arguments.map { "        <string>\(Self.escape($0))</string>" }
        lines += [
            "    </array>",
            "    <key>RunAtLoad</key>",
            "    <true/>",
            "    <key>KeepAlive</key>",
            "    <true/>",
            "    <key>ThrottleInterval</key>",
            "    <integer>5</integer>",
            "    <key>StandardOutPath</key>",
            "    <string>\(Self.escape(definition.logPath))</string>",
            "    <key>StandardErrorPath</key>",
            "    <string>\(Self.escape(definition.logPath))</string>",
            "</dict>",
            "</plist>",
            "",
        ]
        return ServiceFileMark.seal(lines, at: 4, prefix: "<!-- ", suffix: " -->")
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
