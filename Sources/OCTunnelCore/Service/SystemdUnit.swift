/// A systemd user unit that starts a role at login and restarts it, except on the exit codes
/// retrying cannot fix (`RestartPreventExitStatus=`, from `ExitStatus.notRetriedByServices`).
struct SystemdUnit {
    let definition: ServiceDefinition

    func render() -> String {
        let lines = [
            "# \(definition.header)",
            "# octunnel never overwrites or removes this file once it is changed (unless given --force);",
            "# add settings such as Environment= with `systemctl --user edit \(definition.name)` instead.",
            "[Unit]",
            "Description=\(definition.summary)",
            "Wants=network-online.target",
            "After=network-online.target",
            "",
            "[Service]",
            "Type=simple",
            "ExecStart=\(definition.arguments.map(Self.quote).joined(separator: " "))",
            "Restart=always",
            "RestartSec=5",
            "RestartPreventExitStatus=\(ExitStatus.notRetriedByServices.map(String.init).joined(separator: " "))",
            "",
            "[Install]",
            "WantedBy=default.target",
            "",
        ]
        return ServiceFileMark.seal(lines, at: 3, prefix: "# ", suffix: "")
    }

    /// Quotes a word of `ExecStart=` when it needs it; `%` and `$` are escaped (specifiers,
    /// variables), and a control character becomes systemd's C escape `\xHH` (systemd.syntax(7)),
    /// so no character of a path can end the line and start a directive of its own.
    static func quote(_ word: String) -> String {
        let escaped = word.replacingScalars("%", with: "%%").replacingScalars("$", with: "$$")
        let plain = !word.isEmpty && word.unicodeScalars.allSatisfy { !isControl($0) && !$0.properties.isWhitespace && !"\"'\\;".unicodeScalars.contains($0) }
        if plain { return escaped }
        var quoted = "\""
        for scalar in escaped.unicodeScalars {
            switch scalar {
            case "\\": quoted += "\\\\"
            case "\"": quoted += "\\\""
            case _ where isControl(scalar): quoted += "\\x" + (scalar.value < 0x10 ? "0" : "") + String(scalar.value, radix: 16)
            default: quoted.unicodeScalars.append(scalar)
            }
        }
        return quoted + "\""
    }

    /// C0 controls and DEL: what a unit file line cannot hold as itself.
    private static func isControl(_ scalar: Unicode.Scalar) -> Bool { scalar.value < 0x20 || scalar.value == 0x7f }
}
