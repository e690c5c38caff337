import Foundation

extension SessionDriver: StatusSource {
    /// The snapshot `status` gets, built on the loop thread when asked: the driver's record and
    /// state, then the forward's part, the last health test and the last roaming event.
    func statusSnapshot(for endpoint: StatusEndpoint) -> StatusSnapshot {
        let now = MonotonicClock.now()
        let state: StatusSnapshot.State
        if record.stopping {
            state = .stopping
        } else if live != nil {
            state = .connected
        } else if connector.isRunning {
            state = record.sessions > 0 || reconnect.attempts > 1 ? .retrying : .connecting
        } else if reconnect.retryAt != nil {
            state = .disconnected
        } else {
            state = .connecting
        }
        var snapshot = StatusSnapshot(
            role: endpoint.role, profile: endpoint.profile, pid: Int(Syscall.processID), state: state,
            target: settings.target)
        if let info = record.info {
            snapshot.hostKey = info.hostKey.fingerprint
            snapshot.hostKeyType = info.hostKey.type
            snapshot.clientKey = info.clientKeyFingerprint
            snapshot.clientKeyFile = settings.authentication.keyFilePath
            snapshot.cipher = info.cipher
            snapshot.mac = info.mac
            snapshot.kex = info.keyExchange
        }
        snapshot.connectedSince = live == nil ? nil : record.connectedSince
        if state == .disconnected, let retryAt = reconnect.retryAt { snapshot.retryIn = max(0, retryAt - now) }
        snapshot.reconnects = max(0, record.sessions - 1)
        snapshot.sessions = sessions.count + burst.count
        snapshot.sessionsDraining = sessions.draining.count
        snapshot.burstSessions = burst.opened
        snapshot.burstSessionConnections = forwards.reduce(0) { $0 + $1.connectionsOnExtra }
        if let error = record.lastError { snapshot.noteError(error.end.text, at: error.at) }
        for forward in forwards { forward.describe(into: &snapshot) }
        snapshot.health = health.value
        snapshot.notifications = notifications.value
        snapshot.permissionsWaiting = permissionsWaiting.value
        if let event = record.lastNetworkEvent {
            snapshot.lastNetworkEvent = event.text
            snapshot.lastNetworkEventAt = event.at
        }
        return snapshot
    }
}
