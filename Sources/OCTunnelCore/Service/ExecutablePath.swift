import Foundation

/// This binary's absolute path, as the user reached it: a symlink such as Homebrew's
/// `bin/octunnel` is kept, so a service outlives upgrades.
public enum ExecutablePath {
    /// `argument0` made absolute (searched on `PATH` when it has no `/`), else the running image.
    public static func resolve(
        argument0: String = CommandLine.arguments.first ?? "",
        environment: [String: String] = ProcessInfo.processInfo.environment
    ) -> String {
        if argument0.contains("/") {
            let absolute =
                argument0.hasPrefix("/") ? argument0 : FileManager.default.currentDirectoryPath + "/" + argument0
            return (absolute as NSString).standardizingPath
        }
        if !argument0.isEmpty, let found = ToolLocator.find(argument0, environment: environment) { return found }
        return Bundle.main.executablePath ?? argument0
    }
}
