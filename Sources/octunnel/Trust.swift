import ArgumentParser
import OCTunnelCore

struct Trust: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Manage trusted VPS host keys (an OpenSSH known_hosts file).",
        subcommands: [List.self, Reset.self]
    )

    struct List: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "List trusted host keys: host:port, key type, fingerprint.")

        @OptionGroup var options: DirectoryOptions

        func run() throws {
            try runReportingErrors {
                let home = options.resolved
                try home.checkPermissions()
                let store = KnownHostsStore(path: home.knownHostsPath)
                let file = try store.load()
                if let warning = KnownHostsStore.warning(for: file, path: store.path) { Console.say(warning) }
                if file.entries.isEmpty { Console.say("No trusted hosts yet in \(store.path).") }
                for (_, entry) in file.entries {
                    let marker = entry.marker.map { " \($0.rawValue)" } ?? ""
                    Console.data("\(entry.displayHosts) \(entry.keyType) \(entry.fingerprint)\(marker)")
                }
            }
        }
    }

    struct Reset: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Forget the host keys for exactly HOST[:PORT] (port 22 when absent; IPv6 as [::1]:2222)."
        )

        @OptionGroup var options: DirectoryOptions

        @Argument(help: ArgumentHelp("The VPS whose key changed.", valueName: "HOST[:PORT]"))
        var target: String

        func validate() throws { _ = try parseHostPort(target) }

        func run() throws {
            try runReportingErrors {
                let home = options.resolved
                try home.checkPermissions()
                let target = try parseHostPort(self.target)
                let store = KnownHostsStore(path: home.knownHostsPath)
                let removal = try store.remove(host: target.host, port: target.port)
                let noun = removal.removed == 1 ? "entry" : "entries"
                Console.say("Removed \(removal.removed) \(noun) for \(target) from \(store.path).")
                if !removal.keptPatternLines.isEmpty {
                    let lines = removal.keptPatternLines.map(String.init).joined(separator: ", ")
                    Console.say(
                        "Kept line(s) \(lines): they match \(target) through a wildcard pattern; edit them by hand if they are wrong."
                    )
                }
            }
        }
    }
}
