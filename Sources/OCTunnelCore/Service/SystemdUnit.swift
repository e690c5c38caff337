/// A systemd user unit that starts a `LoginService` at login and restarts it, except on the
/// exit codes retrying cannot fix (`RestartPreventExitStatus=`).
struct SystemdUnit {
    let service: LoginService

    /// The unit's lines, its comments first.
    var lines: [String] {
        let start =
            service.comments.map { "# \($0)" } + [
                "[Unit]",
                "Description=\(service.summary)",
                "Wants=network-online.target",
                "After=network-online.target",
                "",
                "[Service]",
            ]
        let execStart = "ExecStart=\(service.arguments.map(Self.quote).joined(separator: " "))"
        if service.oneShot {
            // Started by its timer (`SystemdTimer`): runs to its end, no restart, no [Install].
            return start + ["Type=oneshot", execStart, ""]
        }
        return start + [
            "Type=simple",
            execStart,
            "Restart=always",
            "RestartSec=5",
        ]
            + (service.notRetried.isEmpty
                ? [] : ["RestartPreventExitStatus=\(service.notRetried.map(String.init).joined(separator: " "))"]) + [
                "",
                "[Install]",
                "WantedBy=default.target",
                "",
            ]
    }

    /// Quotes a word of `ExecStart=` when it needs it; `%` and `$` are escaped (specifiers,
    /// variables), and a control character becomes systemd's C escape `\xHH` (systemd.syntax(7)),
    /// so no character of a path can end the line and start a directive of its own.
    static func quote(_ word: String) -> String {
        let escaped = word.replacingScalars("%", with: "%%").replacingScalars("$", with: "$$")
        let plain =
            !word.isEmpty
            && word.unicodeScalars.allSatisfy {
                !isControl($0) && !$0.properties.isWhitespace && !"\"'\\;".unicodeScalars.contains($0)
            }
        if plain { return escaped }
        var quoted = "\""
        for scalar in escaped.unicodeScalars {
            switch scalar {
            case "\\": quoted += "\\\\"
            case "\"": quoted += "\\\""
            case _ where isControl(scalar):
                quoted += "\\x" + (scalar.value < 0x10 ? "0" : "") + String(scalar.value, radix: 16)
            default: quoted.unicodeScalars.append(scalar)
            }
        }
        return quoted + "\""
    }

    /// C0 controls and DEL: what a unit file line cannot hold as itself.
    private static func isControl(_ scalar: Unicode.Scalar) -> Bool { scalar.value < 0x20 || scalar.value == 0x7f }
}

/// The systemd timer that starts a one-shot `SystemdUnit` of the same name once a day (a
/// missed day runs at the next boot or login: `Persistent=`), an hour's random delay apart so
/// machines do not all ask at midnight.
struct SystemdTimer {
    let summary: String
    let comments: [String]

    var lines: [String] {
        comments.map { "# \($0)" } + [
            "[Unit]",
            "Description=\(summary)",
            "",
            "[Timer]",
            "OnCalendar=daily",
            "RandomizedDelaySec=1h",
            "Persistent=true",
            "",
            "[Install]",
            "WantedBy=timers.target",
            "",
        ]
    }
}
