import Foundation

extension StatusSnapshot {
    /// `status` for people: a summary line ("connected to vps.example.com for 3 h 12 min ·
    /// 4 open connections · OpenCode 1.4.7 healthy 20 s ago"), then a few aligned detail lines,
    /// each as `OutsideText` shows it.
    public func humanLines(now: Date = Date()) -> [String] {
        var lines = [summary(now: now)]
        func row(_ label: String, _ value: String) {
            lines.append("  " + label.padding(toLength: 12, withPad: " ", startingAt: 0) + value)
        }
        if let local, let remote {
            let locals = ([local] + alsoLocal).map(\.description).joined(separator: " and ")
            row("forwarding", role == .home ? "VPS \(remote) → \(local)" : "\(locals) → VPS \(remote)")
        }
        // The forwards beside OpenCode's, each with its own counts.
        for forward in forwards.dropFirst() {
            let path =
                role == .home
                ? "VPS \(forward.forward.listen) → \(forward.forward.target)"
                : "\(forward.forward.listen) → VPS \(forward.forward.target)"
            var text =
                "\(path) · \(Self.count(forward.totalConnections, "connection")) · \(Self.bytes(forward.bytesIn)) in"
            if let error = forward.lastError { text += " · last error: \(error)" }
            row("forwarding", text)
        }
        if let hostKey {
            let algorithms = [cipher, mac].compactMap { $0 }.joined(separator: ", ")
            row(
                "host key",
                [hostKeyType, hostKey].compactMap { $0 }.joined(separator: " ")
                    + (algorithms.isEmpty ? "" : " (\(algorithms))"))
        }
        if let clientKey {
            let file = clientKeyFile.map { OutsideText.shown($0, limit: 256) } ?? "an ssh-agent key"
            row("signed in", "as \(target.user) with \(clientKey) (\(file))")
        }
        row(
            "traffic",
            "\(Self.count(totalConnections, "connection")) since start · \(Self.bytes(bytesIn)) in · \(Self.bytes(bytesOut)) out"
        )
        if let health {
            let verdict = health.ok ? "✓" : "✗"
            row("health", "\(verdict) \(health.detail) (\(Self.duration(now.timeIntervalSince(health.checkedAt))) ago)")
        }
        if sessions > 1 || burstSessions > 0 {
            var text = "\(sessions)"
            if sessionsDraining > 0 {
                text += " · \(sessionsDraining) replaced, keeping its connections until they end"
            }
            if burstSessions > 0 { text += " · \(Self.count(burstSessions, "extra session")) for bursts since start" }
            if burstSessionConnections > 0 {
                text +=
                    " · the extra one kept by \(Self.count(burstSessionConnections, "connection")) opened in its burst"
            }
            row("sessions", text)
        }
        if reconnects > 0 || lastError != nil {
            var text = reconnects == 0 ? "none" : "\(reconnects)"
            if let lastError { text += " · last error: \(lastError)" }
            row("reconnects", text)
        }
        if let permissionsWaiting, permissionsWaiting > 0 {
            row("waiting", "\(permissionsWaiting) for an answer (permission requests and questions)")
        }
        for notified in notifications {
            row("notified", "\(notified.text) (\(Self.duration(now.timeIntervalSince(notified.at))) ago)")
        }
        if let lastNetworkEvent {
            let ago = lastNetworkEventAt.map { " (\(Self.duration(now.timeIntervalSince($0))) ago)" } ?? ""
            row("network", lastNetworkEvent + ago)
        }
        if stalls > 0 {
            row("stalls", "\(stalls) stalled connection(s) found and moved again (a bug: please report it)")
        }
        row("process", "pid \(pid) · profile \(profile)")
        // The snapshot is what another process wrote on the status socket: shown as outside text.
        return lines.map { OutsideText.shown($0, limit: 4096) }
    }

    /// The first line: the state, how long, the connections and OpenCode's health.
    func summary(now: Date) -> String {
        let host = target.port == 22 ? target.host : target.hostPort.description
        var parts: [String]
        switch state {
        case .connected:
            let since = connectedSince.map { " for " + Self.duration(now.timeIntervalSince($0)) } ?? ""
            parts = [
                "connected to \(host)\(since)" + (sessions > 1 ? " (\(sessions) sessions)" : ""),
                Self.count(openConnections, "open connection"),
            ]
            if let health {
                let ago = Self.duration(now.timeIntervalSince(health.checkedAt)) + " ago"
                if health.ok {
                    parts.append("OpenCode\(health.version.map { " " + $0 } ?? "") healthy \(ago)")
                } else {
                    parts.append("OpenCode health failed \(ago)")
                }
            }
        case .connecting:
            parts = ["connecting to \(host)…"]
        case .retrying:
            parts = ["reconnecting to \(host)…", Self.count(openConnections, "connection") + " waiting"]
        case .disconnected:
            let next = retryIn.map { "; retrying in \(Self.duration($0))" } ?? ""
            parts = ["disconnected from \(host)\(next)", Self.count(openConnections, "connection") + " waiting"]
        case .stopping:
            parts = ["stopping"]
        }
        return parts.joined(separator: " · ")
    }

    /// "20 s", "12 min", "3 h 12 min", "2 d 4 h".
    static func duration(_ seconds: Double) -> String {
        let total = max(0, Int(seconds.rounded(.down)))
        if total < 60 { return "\(total) s" }
        let minutes = total / 60
        if minutes < 60 { return "\(minutes) min" }
        let hours = minutes / 60
        if hours < 24 { return minutes % 60 == 0 ? "\(hours) h" : "\(hours) h \(minutes % 60) min" }
        return hours % 24 == 0 ? "\(hours / 24) d" : "\(hours / 24) d \(hours % 24) h"
    }

    /// "512 B", "3.4 KiB", "1.2 MiB", "5.0 GiB".
    static func bytes(_ count: Int) -> String {
        if count < 1024 { return "\(count) B" }
        var value = Double(count) / 1024
        for unit in ["KiB", "MiB", "GiB"] {
            if value < 1024 || unit == "GiB" { return String(format: "%.1f", value) + " " + unit }
            value /= 1024
        }
        return "\(count) B"
    }

    static func count(_ value: Int, _ noun: String) -> String {
        "\(value) \(noun)\(value == 1 ? "" : "s")"
    }
}
