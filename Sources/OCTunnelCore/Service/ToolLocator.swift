import Foundation

/// Finds programs on `PATH`, as a shell does.
public enum ToolLocator {
    /// The first executable `name` in `$PATH`, or nil.
    public static func find(
        _ name: String, environment: [String: String] = ProcessInfo.processInfo.environment
    ) -> String? {
        let path = environment["PATH"] ?? "/usr/bin:/bin"
        for directory in path.split(separator: ":") where directory.hasPrefix("/") {
            let candidate = directory + "/" + name
            if let info = try? Syscall.fileStatus(candidate), info.kind == .regular, Syscall.isExecutable(candidate) {
                return candidate
            }
        }
        return nil
    }
}
