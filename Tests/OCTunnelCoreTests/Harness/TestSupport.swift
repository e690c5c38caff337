import Foundation
import OCTunnelTestSupport
import Testing
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

let sshKeygen = "/usr/bin/ssh-keygen"

/// Runs ssh-keygen and requires it to succeed.
@discardableResult
func sshKeygenOK(_ arguments: [String], sourceLocation: SourceLocation = #_sourceLocation) throws -> ToolResult {
    let result = try run(sshKeygen, arguments)
    try #require(result.status == 0, "ssh-keygen \(arguments): \(result.stderr)", sourceLocation: sourceLocation)
    return result
}

