import Foundation
@testable import OCTunnelCore
import OCTunnelTestSupport
import Testing

/// The laptop side of issue 47 that needs no VPS: the spawner's stdin, how the user's ssh is
/// called, and the key store's `.next` pair, swap and refusal while a rotation is pending.
@Suite("keys for life: the laptop's own parts", .ownThreads)
struct KeyLifeLocalTests {
    @Test("a child reads the whole input and its end from stdin; too much input is refused before anything runs")
    func childReadsInput() throws {
        let program = Array("line one\nline two\n".utf8)
        let result = try ChildProcess.run(
            "/bin/sh", ["-c", "wc -c; cat >/dev/null; echo done"], environment: ["PATH": "/usr/bin:/bin"], timeout: 10,
            input: program)
        #expect(result.status == 0)
        #expect(
            result.stdout.split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) } == [
                String(program.count), "done",
            ])
        // A child that never reads its stdin does not stall the spawner.
        let ignored = try ChildProcess.run(
            "/bin/true", [], environment: nil, timeout: 10,
            input: Array(repeating: 0x41, count: ChildProcess.inputLimit))
        #expect(ignored.status == 0)
        #expect(throws: SystemError.self) {
            try ChildProcess.run(
                "/bin/true", [], environment: nil, timeout: 10,
                input: Array(repeating: 0x41, count: ChildProcess.inputLimit + 1))
        }
    }

    @Test("the user's ssh: -F when $HOME is not the passwd home, the port as -p, no forwards, a program on /bin/sh -s")
    func userSSHArguments() throws {
        try withTemporaryDirectory { dir in
            try FileManager.default.createDirectory(atPath: dir + "/.ssh", withIntermediateDirectories: true)
            try "Host vps\n  HostName 127.0.0.1\n".write(
                toFile: dir + "/.ssh/config", atomically: true, encoding: .utf8)
            let ssh = UserSSH(environment: ["HOME": dir, "PATH": "/usr/bin:/bin"])
            let tail = ["-T", "-x", "-a", "-o", "ClearAllForwardings=yes", "--"]
            #expect(try ssh.arguments(target: "vps") == ["-F", dir + "/.ssh/config"] + tail + ["vps", "/bin/sh -s"])
            #expect(
                try ssh.arguments(target: "you@vps.example.com:2222") == ["-F", dir + "/.ssh/config", "-p", "2222"]
                    + tail + ["you@vps.example.com", "/bin/sh -s"])
            #expect(
                try ssh.arguments(target: "you@[::1]:2200") == ["-F", dir + "/.ssh/config", "-p", "2200"] + tail + [
                    "you@::1", "/bin/sh -s",
                ])
            #expect(UserSSH.targetProblem("-oProxyCommand=x") != nil)
            #expect(UserSSH.targetProblem("you@vps") == nil)
            #expect(AuthorizedKeysPath.problem(".ssh/authorized_keys") == nil)
            #expect(AuthorizedKeysPath.problem("/etc/ssh/keys/you") == nil)
            for bad in ["", "a b", "x\"y", "$HOME/k", "k;rm", "-x", "a\nb", "a:b"] {
                #expect(AuthorizedKeysPath.problem(bad) != nil, "\(bad)")
            }
        }
    }

    @Test("ssh's exit 255 is 'could not log in to the VPS with your ssh', its words shown")
    func userSSHFailure() throws {
        try withTemporaryDirectory { dir in
            // A stand-in ssh that fails as ssh does when it cannot log in.
            let fake = dir + "/ssh"
            try writeBytes(
                Array("#!/bin/sh\ncat >/dev/null\necho 'Permission denied (publickey).' >&2\nexit 255\n".utf8), to: fake
            )
            chmod(fake, 0o755)
            var ssh = UserSSH(environment: ["HOME": dir, "PATH": dir])
            #expect(ssh.sshPath == fake)
            ssh.timeout = 10
            // A child another test spawns at this moment may hold the script open for writing a
            // moment longer (ETXTBSY): try again.
            var failure: (any OCTunnelFailure)?
            for _ in 0..<20 {
                do {
                    _ = try ssh.run(target: "vps", program: "echo hi")
                } catch {
                    failure = octunnelFailure(error)
                    if error.localizedDescription.contains("Text file busy") { usleep(50_000); continue }
                }
                break
            }
            let error = try #require(failure)
            guard case AuthorizedKeysError.userSSHFailed = error else { Issue.record("\(error)"); return }
            #expect(error.exitStatus == .unavailable)
            #expect(error.localizedDescription.contains("could not log in to the VPS with your ssh"))
            #expect(error.localizedDescription.contains("Permission denied (publickey)"))
        }
    }

    @Test(
        "the .next pair: made once, swapped in with the old key as .prev (an older .prev archived), removed only once current; plain --rotate refused while pending"
    )
    func nextPairAndSwap() throws {
        try withTemporaryDirectory { dir in
            let store = KeyStore(directory: OctunnelDirectory(path: dir + "/oct"))
            let first = try store.generate(comment: "first", rotate: false).publicKey
            let second = try store.generate(comment: "second", rotate: true).publicKey
            let next = try store.whileLocked { () throws in try store.makeNext(comment: "third") }
            // Asked again (a resumed rotation), the pending key is kept, never replaced.
            #expect(try store.whileLocked { () throws in try store.makeNext(comment: "other") }.blob == next.blob)
            #expect(try FileBytes.status(store.nextPrivateKeyPath).map { $0.permissions & 0o777 } == 0o600)
            #expect(try store.publicKey().blob == second.blob)
            // Not the current key yet: never removed.
            #expect(throws: LocalFileError.self) { try store.removeNext() }
            try RotationState(
                old: second.fingerprint, new: next.fingerprint, target: "vps", role: .tunnel,
                end: HostPort(host: "127.0.0.1", port: 18080)
            ).save(store)
            #expect(try RotationState.load(store)?.new == next.fingerprint)
            #expect(try RotationState.load(store)?.endHostPort == HostPort(host: "127.0.0.1", port: 18080))
            #expect { try store.generate(comment: "x", rotate: true) } throws: { error in
                (error as? KeyError).map { if case .rotationPending = $0 { return true } else { return false } }
                    ?? false
            }
            let swap = try store.whileLocked { () throws in try store.promoteNext() }
            #expect(swap.previous.blob == second.blob)
            let archived = try #require(swap.archived)
            #expect(try store.publicHalf(at: archived).blob == first.blob)
            #expect(try store.publicKey().blob == next.blob)
            #expect(try store.publicHalf(at: store.previousPrivateKeyPath).blob == second.blob)
            // Swapping again (a rerun after a crash) changes nothing and archives nothing.
            let again = try store.whileLocked { () throws in try store.promoteNext() }
            #expect(again.archived == nil && again.previous.blob == second.blob)
            try store.removeNext()
            #expect(!FileManager.default.fileExists(atPath: store.nextPrivateKeyPath))
            #expect(!FileManager.default.fileExists(atPath: store.nextPublicKeyPath))
            try RotationState.remove(store)
            #expect(try RotationState.load(store) == nil)
        }
    }
}
