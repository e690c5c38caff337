import Foundation

/// A path as the user typed it, made absolute: `~` expanded, a relative path taken from the
/// working directory (for paths that are saved, or used after the directory may change).
public enum UserPath {
    /// Whether `path` holds a control character (a line break, an escape): no real path
    /// does, and one that does could inject lines into a service file or a terminal.
    public static func hasControlCharacters(_ path: String) -> Bool {
        path.unicodeScalars.contains { $0.value < 0x20 || $0.value == 0x7f || (0x80...0x9f).contains($0.value) }
    }

    public static func absolute(_ path: String) -> String {
        let expanded = (path as NSString).expandingTildeInPath
        if expanded.hasPrefix("/") { return expanded }
        return FileManager.default.currentDirectoryPath + "/" + expanded
    }
}
