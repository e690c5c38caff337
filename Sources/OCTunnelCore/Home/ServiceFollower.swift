import Foundation

/// Follows OpenCode 2's background service when it moves (restarted on another port, `opencode
/// service set port`): `home up`'s OpenCode forward asks before each connection it carries, and
/// the service's files are read again at most once a second.
///
/// The files are read, and the address they name looked up, on a thread of the follower's own,
/// never on the event loop: a slow disk, a FIFO or a lookup that hangs must not stop a forward
/// (the loop asks, goes on, and is woken when the answer is there).
final class ServiceFollower: @unchecked Sendable {
    /// A service found somewhere else than `current`, its addresses looked up.
    struct Move {
        let service: OpenCodeServiceFiles.Service
        let addresses: [(family: Int32, address: Data)]
    }

    private struct Shared {
        var reading = false
        var queued = false
        var readsStarted = 0
        var readsDone = 0
        var move: Move?
    }

    private let files: OpenCodeServiceFiles
    private let allowedHost: String?
    private let interval: Double
    private let wake: @Sendable () -> Void
    private let queue = DispatchQueue(label: "octunnel.service-follower")
    private let shared = Locked(Shared())
    private var lastStarted = -Double.infinity
    /// The address connections go to now (the loop's; a read compares against the one it was started with).
    private(set) var current: HostPort

    /// `allowedHost`: the home host the user gave (the files may name it as well as loopback);
    /// `wake`: wakes the loop when a read is done.
    init(
        current: HostPort, files: OpenCodeServiceFiles = OpenCodeServiceFiles(), allowedHost: String? = nil,
        interval: Double = 1,
        wake: @escaping @Sendable () -> Void
    ) {
        self.current = current
        self.files = files
        self.allowedHost = allowedHost
        self.interval = interval
        self.wake = wake
    }

    /// The running service's address now, when a finished read found it elsewhere than the last
    /// one (nil: unchanged, not read yet, or not running: the last address stays, the 502 then
    /// says why). Asks for a read first (`ask`).
    func moved(now: Double, force: Bool = false) -> Move? {
        ask(now: now, force: force)
        guard let move = shared.value.move else { return nil }
        shared.update { $0.move = nil }
        guard move.service.address != current else { return nil }
        current = move.service.address
        return move
    }

    /// Starts a read off the loop when the last started `interval` ago, or with `force` (a
    /// connection to the last address just failed): then, should a read run already, one more
    /// follows it (at most one waits). Returns the number of a read that starts no earlier than
    /// now when forced (else the newest), for `isDone`.
    @discardableResult
    func ask(now: Double, force: Bool) -> Int {
        guard force || now - lastStarted >= interval else { return shared.value.readsStarted }
        var begin = false
        var number = 0
        shared.update { state in
            if !state.reading {
                state.reading = true
                state.readsStarted += 1
                begin = true
            } else if force && !state.queued {
                state.queued = true
                state.readsStarted += 1
            }
            number = state.readsStarted
        }
        lastStarted = now
        if begin { read(from: current) }
        return number
    }

    /// Whether read number `read` (from `ask`) is done.
    func isDone(_ read: Int) -> Bool { shared.value.readsDone >= read }

    private func read(from current: HostPort) {
        let (files, allowedHost, wake) = (files, allowedHost, wake)
        queue.async { [weak self, shared] in
            // Only a running service's registration moves it: between a stop and the next start
            // the settings name where it may come back, not where it is (the 502 says it is not running).
            var move: Move?
            if let service = files.find(allowedHost: allowedHost).service, service.registration != nil,
                service.address != current,
                let addresses = try? Sockets.resolve(host: service.address.host, port: service.address.port)
            {
                move = Move(service: service, addresses: addresses)
            }
            var again = false
            shared.update { state in
                state.readsDone += 1
                if let move { state.move = move }
                if state.queued {
                    state.queued = false
                    again = true
                } else {
                    state.reading = false
                }
            }
            if again { self?.read(from: move?.service.address ?? current) }
            wake()
        }
    }
}
