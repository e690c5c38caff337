import Foundation
import OCTunnelTestSupport

/// `tunnel check` of `remotePort` through `fixture`'s sshd (connect timeout 10 s, the health test's `healthTimeout`),
/// in the runner's environment changed by `environment` (a nil value removes that variable): the suites of the
/// health test (CheckAndHealthTests, OpenCodeGenerationTests, OpenCodeNowTests) each choose their variables.
func tunnelCheck(
    _ fixture: TunnelFixture, remotePort: Int, extra: [String] = [], healthTimeout: Int = 3,
    environment: [String: String?] = [:]
) throws -> ProcessResult {
    var variables = inheritedEnvironment
    for (name, value) in environment { variables[name] = value }
    return try run(
        octunnelBinary,
        [
            "tunnel", "check", "--home", fixture.home.path, fixture.target, "--remote-port", String(remotePort),
            "--connect-timeout", "10", "--health-timeout", String(healthTimeout),
        ] + extra,
        environment: variables)
}
