import OCTunnelLibc

/// posix_spawn's file actions (a struct on Linux, an opaque pointer on macOS), destroyed with
/// this object, and the spawn calls that take them.
final class SpawnActions {
    private var actions: Platform.SpawnFileActions

    /// `posix_spawn_file_actions_init`.
    init() {
        actions = Platform.emptySpawnFileActions()
        posix_spawn_file_actions_init(&actions)
    }

    deinit { posix_spawn_file_actions_destroy(&actions) }

    /// `posix_spawn_file_actions_addopen`: the child opens `path` as `fd`.
    func open(_ fd: Int32, _ path: String, _ flags: Int32) {
        posix_spawn_file_actions_addopen(&actions, fd, path, flags, 0)
    }

    /// `posix_spawn_file_actions_adddup2`: the child's `target` is a copy of `fd`.
    func duplicate(_ fd: Int32, as target: Int32) {
        posix_spawn_file_actions_adddup2(&actions, fd, target)
    }

    /// `posix_spawn_file_actions_addclose`: the child closes `fd`.
    func close(_ fd: Int32) {
        posix_spawn_file_actions_addclose(&actions, fd)
    }

    /// `posix_spawn` (`path` as given) or `posix_spawnp` (`searchPath`: looked up in PATH), with
    /// `environment` (nil: this process's own). Returns the call's result (0 or an errno) and the pid.
    /// `ownGroup`: the child leads a process group of its own (`posix_spawnattr_setpgroup` 0),
    /// so it and whatever it starts can be killed together (`kill(-pid)`).
    func spawn(
        _ path: String, arguments argv: [UnsafeMutablePointer<CChar>?],
        environment envp: [UnsafeMutablePointer<CChar>?]?, searchPath: Bool, ownGroup: Bool = false
    ) -> (rc: Int32, pid: pid_t) {
        var pid: pid_t = 0
        var attributes = Platform.emptySpawnAttributes()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        if ownGroup {
            posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETPGROUP))
            posix_spawnattr_setpgroup(&attributes, 0)
        }
        let rc: Int32
        if let envp {
            rc =
                searchPath
                ? posix_spawnp(&pid, path, &actions, &attributes, argv, envp)
                : posix_spawn(&pid, path, &actions, &attributes, argv, envp)
        } else {
            rc =
                searchPath
                ? posix_spawnp(&pid, path, &actions, &attributes, argv, Self.inheritedEnvironment)
                : posix_spawn(&pid, path, &actions, &attributes, argv, Self.inheritedEnvironment)
        }
        return (rc, pid)
    }

    /// This process's environment block (`environ`; `_NSGetEnviron()` on macOS).
    private static var inheritedEnvironment: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>? {
        Platform.environment
    }
}
