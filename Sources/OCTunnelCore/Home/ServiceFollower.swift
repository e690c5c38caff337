import Foundation

/// Follows OpenCode 2's background service when it moves (restarted on another port, `opencode
/// service set port`): `home up`'s OpenCode forward asks before each connection it carries, and
/// the service's files are read again at most once a second.
final class ServiceFollower {
    private let files: OpenCodeServiceFiles
    private let interval: Double
    private var lastRead = -Double.infinity
    private(set) var current: HostPort

    init(current: HostPort, files: OpenCodeServiceFiles = OpenCodeServiceFiles(), interval: Double = 1) {
        self.current = current
        self.files = files
        self.interval = interval
    }

    /// The running service's address now, when it differs from the last one (nil: unchanged, not
    /// read again yet, or not running: the last address stays, the 502 then says why). `force`
    /// reads the files whenever it was last done: a connection to the last address just failed.
    func moved(now: Double, force: Bool = false) -> OpenCodeServiceFiles.Service? {
        guard force || now - lastRead >= interval else { return nil }
        lastRead = now
        // Only a running service's registration moves it: between a stop and the next start the
        // settings name where it may come back, not where it is (the 502 says it is not running).
        guard let service = files.find().service, service.registration != nil, service.address != current else { return nil }
        current = service.address
        return service
    }
}
