/// One program run at login and kept running: the one model both start-at-login renderers
/// (`SystemdUnit`, `LaunchAgent`) render, whoever asks for it: `service install`'s files
/// (`ServiceDefinition.loginService`) and the units `tunnel reverse-command` prints
/// (`ReverseCommand`), so every such file escapes its words the same way (issue 49).
struct LoginService {
    /// The launchd label (`dev.octunnel.tunnel`); systemd names a unit by its file instead.
    let label: String
    /// What it is, in a few words (systemd's `Description=`).
    let summary: String
    /// The program and its arguments, each a word of its own (never through a shell).
    let arguments: [String]
    /// The comment lines the file starts with (without the comment syntax).
    let comments: [String]
    /// The exit codes a restart cannot fix (systemd's `RestartPreventExitStatus=`; none: left out).
    var notRetried: [Int32] = []
    /// Where launchd writes its output (systemd has the journal); nil: launchd's default.
    var logPath: String?
    /// Run to its end each time it is started, never kept running or restarted (systemd's
    /// `Type=oneshot`; launchd runs it every `interval` seconds instead of keeping it alive).
    var oneShot = false
    /// launchd's `StartInterval` for a one-shot program (systemd schedules it with a timer).
    var interval: Int?
}
