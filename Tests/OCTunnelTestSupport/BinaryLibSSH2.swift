import Foundation

/// The libssh2 version the `octunnel` under test runs on, from its `--version` ("0.9.0 (libssh2
/// 1.11.1)"), e.g. [1, 11, 1]; empty when it cannot be read. Not the host's pkg-config: the
/// Debian 13 leg runs a binary built in that root (`OCTUNNEL_BINARY`).
public let octunnelLibSSH2Version: [Int] = {
    guard let printed = try? run(octunnelBinary, ["--version"]).stdout,
        let range = printed.range(of: #"libssh2 [0-9]+(\.[0-9]+)*"#, options: .regularExpression)
    else { return [] }
    return printed[range].dropFirst("libssh2 ".count).split(separator: ".").compactMap { Int($0) }
}()

/// Whether the `octunnel` under test runs on libssh2 `version` or newer (e.g. [1, 11, 1]).
public func octunnelRunsOnLibSSH2(atLeast version: [Int]) -> Bool {
    !octunnelLibSSH2Version.isEmpty && octunnelLibSSH2Version.lexicographicallyPrecedes(version) == false
}
