import Foundation
import OCTunnelTestSupport

extension TempDirectory {
    /// A fresh directory named after `prefix` holding `files`, each with its text and mode: password files laid
    /// out as a test of reading them needs.
    static func holding(_ prefix: String, _ files: [(name: String, text: String, mode: Int)]) throws -> TempDirectory {
        let directory = try TempDirectory(prefix)
        for file in files { try directory.write(file.name, file.text, mode: file.mode) }
        return directory
    }
}
