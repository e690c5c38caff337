import Foundation
import OCTunnelTestSupport
import OCTunnelCore
import Testing

@Suite("KeyStore: generate, refuse to overwrite, rotate", .ownThreads)
struct KeyStoreTests {
    @Test func generateWritesAPrivatePairInAPrivateHome() throws {
        try withTemporaryDirectory { dir in
            let home = OctunnelDirectory(path: dir + "/config/octunnel")
            let store = KeyStore(directory: home)

            let made = try store.generate(comment: "me@box", rotate: false)

            #expect(try mode(of: home.path) == 0o700)
            #expect(try mode(of: store.privateKeyPath) == 0o600)
            #expect(try mode(of: store.publicKeyPath) == 0o644)
            #expect(made.privateKeyPath == store.privateKeyPath)
            #expect(made.previous == nil)
            #expect(made.archivedOlder == nil)
            #expect(made.publicKey.comment == "me@box")
            #expect(try readText(store.publicKeyPath) == made.publicKey.line + "\n")
            #expect(try store.loadPrivateKey().decoded.publicKey == made.publicKey)
            #expect(try store.publicKey() == made.publicKey)
        }
    }

    @Test func generateWithoutRotateNeverTouchesAnExistingKey() throws {
        try withTemporaryDirectory { dir in
            let store = KeyStore(directory: OctunnelDirectory(path: dir + "/home"))
            _ = try store.generate(comment: "first", rotate: false)
            let privateBefore = try readBytes(store.privateKeyPath)
            let publicBefore = try readBytes(store.publicKeyPath)

            #expect(throws: KeyError.keyExists(path: store.privateKeyPath)) {
                try store.generate(comment: "second", rotate: false)
            }

            #expect(KeyError.keyExists(path: store.privateKeyPath).exitStatus.rawValue == 73)
            #expect(KeyError.keyExists(path: store.privateKeyPath).errorDescription?.contains("--rotate") == true)
            #expect(try readBytes(store.privateKeyPath) == privateBefore)
            #expect(try readBytes(store.publicKeyPath) == publicBefore)
            #expect(!fileExists(store.previousPrivateKeyPath))
        }
    }

    @Test func aLonePublicKeyAlsoBlocksGenerate() throws {
        try withTemporaryDirectory { dir in
            let store = KeyStore(directory: OctunnelDirectory(path: dir))
            try writeText("ssh-ed25519 AAAA leftover\n", to: store.publicKeyPath, mode: 0o644)

            #expect(throws: KeyError.keyExists(path: store.privateKeyPath)) {
                try store.generate(comment: "c", rotate: false)
            }
            #expect(try readText(store.publicKeyPath) == "ssh-ed25519 AAAA leftover\n")
            #expect(!fileExists(store.privateKeyPath))
        }
    }

    @Test func rotateKeepsTheOldPairAsPrev() throws {
        try withTemporaryDirectory { dir in
            let store = KeyStore(directory: OctunnelDirectory(path: dir + "/home"))
            let old = try store.generate(comment: "old", rotate: false)
            let oldPrivate = try readBytes(store.privateKeyPath)

            let new = try store.generate(comment: "new", rotate: true)

            #expect(new.publicKey != old.publicKey)
            #expect(new.publicKey.blob != old.publicKey.blob)
            #expect(new.previous == old.publicKey)
            #expect(new.archivedOlder == nil)
            #expect(try readBytes(store.previousPrivateKeyPath) == oldPrivate)
            #expect(try readText(store.previousPublicKeyPath) == old.publicKey.line + "\n")
            #expect(try mode(of: store.previousPrivateKeyPath) == 0o600)
            #expect(try mode(of: store.previousPublicKeyPath) == 0o644)
            #expect(try mode(of: store.privateKeyPath) == 0o600)
            #expect(try mode(of: store.publicKeyPath) == 0o644)
            #expect(try store.loadPrivateKey(at: store.previousPrivateKeyPath).decoded.publicKey == old.publicKey)
            #expect(try store.publicKey() == new.publicKey)
            #expect(try readText(store.publicKeyPath) == new.publicKey.line + "\n")
        }
    }

    @Test func repeatedRotationsNeverLoseAKey() throws {
        try withTemporaryDirectory { dir in
            let store = KeyStore(directory: OctunnelDirectory(path: dir + "/home"))
            var made = [try store.generate(comment: "k0", rotate: false)]
            for index in 1...3 {
                made.append(try store.generate(comment: "k\(index)", rotate: true))
            }

            #expect(made[1].archivedOlder == nil)
            let archived = try #require(made[2].archivedOlder)
            #expect(archived.hasPrefix(store.privateKeyPath + ".prev-"))
            #expect(try store.loadPrivateKey(at: archived).decoded.publicKey == made[0].publicKey)
            #expect(try mode(of: archived) == 0o600)
            #expect(try readText(archived + ".pub") == made[0].publicKey.line + "\n")
            let secondArchive = try #require(made[3].archivedOlder)
            #expect(secondArchive != archived)

            let privateFiles = try FileManager.default.contentsOfDirectory(atPath: store.directory.path)
                .filter { $0.hasPrefix("id_ed25519") && !$0.hasSuffix(".pub") }
            var keysOnDisk = Set<[UInt8]>()
            for name in privateFiles {
                keysOnDisk.insert(
                    try store.loadPrivateKey(at: store.directory.path + "/" + name).decoded.publicKey.blob)
            }
            #expect(privateFiles.count == 4, "\(privateFiles)")
            #expect(keysOnDisk == Set(made.map(\.publicKey.blob)))
        }
    }

    @Test func rotateRefusesToRetireAKeyItCannotRead() throws {
        try withTemporaryDirectory { dir in
            let store = KeyStore(directory: OctunnelDirectory(path: dir))
            try writeText("not a key\n", to: store.privateKeyPath)
            try writeText("ssh-ed25519 AAAA x\n", to: store.publicKeyPath, mode: 0o644)

            let error = #expect(throws: KeyError.self) { try store.generate(comment: "c", rotate: true) }

            #expect(error?.exitStatus == .dataError)
            #expect(try readText(store.privateKeyPath) == "not a key\n")
            #expect(!fileExists(store.previousPrivateKeyPath))
        }
    }

    @Test func theDefaultCommentNamesOctunnelAndThisHost() throws {
        let comment = KeyStore.defaultComment()
        #expect(comment.hasPrefix("octunnel@"))
        #expect(comment.count > "octunnel@".count)
        #expect(comment.allSatisfy { !$0.isWhitespace })
        try withTemporaryDirectory { dir in
            let made = try KeyStore(directory: OctunnelDirectory(path: dir)).generate(comment: comment, rotate: false)
            #expect(made.publicKey.line.hasSuffix(" " + comment))
        }
    }

    @Test func aCommentWithALineBreakIsRefusedBeforeAnythingIsWritten() throws {
        try withTemporaryDirectory { dir in
            let store = KeyStore(directory: OctunnelDirectory(path: dir + "/home"))
            #expect(throws: KeyError.self) { try store.generate(comment: "a\nb", rotate: false) }
            #expect(!fileExists(store.privateKeyPath))
        }
    }

    @Test func aSymlinkedKeyIsJudgedByTheFileItPointsTo() throws {
        try withTemporaryDirectory { dir in
            let store = KeyStore(directory: OctunnelDirectory(path: dir + "/home"))
            let made = try store.generate(comment: "linked", rotate: false)
            let link = dir + "/link_ed25519"
            #expect(symlink(store.privateKeyPath, link) == 0)
            #expect(try store.loadPrivateKey(at: link).decoded.publicKey == made.publicKey)

            #expect(chmod(store.privateKeyPath, 0o644) == 0)
            // The fix names the target, never `chmod 600 LINK` (think of a link to /etc/shadow).
            let target = try #require(
                realpath(store.privateKeyPath, nil).map { pointer in
                    defer { free(pointer) }; return String(cString: pointer)
                })
            let linked = KeyError.unsafeLinkedKeyPermissions(path: link, target: target, mode: 0o644)
            #expect(throws: linked) { try store.loadPrivateKey(at: link) }
            #expect(!(linked.errorDescription ?? "").contains("chmod 600 \(link)"))
            #expect((linked.errorDescription ?? "").contains("chmod 600 \(target)"))
            #expect((linked.errorDescription ?? "").contains("replace the link"))

            #expect(symlink(dir + "/missing", dir + "/dangling") == 0)
            #expect(throws: KeyError.noKey(path: dir + "/dangling")) { try store.loadPrivateKey(at: dir + "/dangling") }

            #expect(throws: KeyError.badKeyFile(path: dir, reason: "it is a directory, not a regular file")) {
                try store.loadPrivateKey(at: dir)
            }
        }
    }

    @Test func restrictedLineAllowsOnlyTheOneForward() throws {
        let key = SSHPublicKey(ed25519: try Ed25519KeyPair.generate().publicKey, comment: "c")
        // The forced command: the rotation verbs with the key's tag, then a refusal of everything else (as /bin/false).
        let tag = OctunnelKeyLine.tag(for: key), today = OctunnelKeyLine.today()
        let command = OctunnelKeyLine.forcedCommand(
            role: .tunnel, ends: [HostPort(host: "127.0.0.1", port: 19000)], tag: tag, added: today)
        #expect(
            command.hasPrefix("exec /bin/sh -c 'K=\(tag) P= A=\(today) F=.ssh/authorized_keys;")
                && command.hasSuffix(#";echo \"octunnel-keys v=1 result=refused reason=verb\";exit 1'"#), "\(command)")
        #expect(
            restrictedAuthorizedKeysLine(key, remotePort: 19000)
                == "restrict,port-forwarding,permitopen=\"127.0.0.1:19000\",permitlisten=\"127.0.0.1:1\",command=\"\(command)\" \(key.line)"
        )
        let ipv6 = OctunnelKeyLine.forcedCommand(
            role: .tunnel, ends: [HostPort(host: "::1", port: 18080)], tag: tag, added: today)
        #expect(
            restrictedAuthorizedKeysLine(key, remoteHost: "::1", remotePort: 18080)
                == "restrict,port-forwarding,permitopen=\"[::1]:18080\",permitlisten=\"127.0.0.1:1\",command=\"\(ipv6)\" \(key.line)"
        )
    }
}
