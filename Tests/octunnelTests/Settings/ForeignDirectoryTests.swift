import Foundation
import OCTunnelTestSupport
import Testing

/// A directory octunnel writes in must be the user's own, whatever its mode, and its lock files
/// are never symbolic links followed to somebody else's choice of file (docs/security.md,
/// "Files"). Run as root, as CI runs: the attack is another user's directory handed to root.
@Suite("another user's directory and planted links: refused, nothing created", .ownThreads)
struct ForeignDirectoryTests {
    /// uid 65534 (nobody): another user, whoever runs the tests.
    static let otherUser: uid_t = 65534

    /// Makes a key in `home`, then puts a link in place of the lock file keygen leaves behind;
    /// the link's target (not created), in `dir`.
    static func keyWithLockLink(home: String, in dir: String) throws -> String {
        #expect(try Octunnel.run(["keygen", "--home", home], in: dir).status == 0)
        let target = dir + "/created-by-the-link"
        unlink(home + "/.keygen.lock")
        try #require(symlink(target, home + "/.keygen.lock") == 0)
        return target
    }

    @Test(
        "root's keygen --rotate in a 0700 home owned by another user: refused (77) before the lock, the link's target not created",
        .enabled(if: getuid() == 0, "only root can hand a directory to another user"))
    func homeOwnedByAnotherUser() throws {
        try withTemporaryDirectory { dir in
            let foreign = dir + "/foreign"
            // keygen leaves its lock file behind: the other user replaces it with a link.
            let target = try Self.keyWithLockLink(home: foreign, in: dir)
            try #require(chown(foreign, Self.otherUser, Self.otherUser) == 0)
            let before = try readText(foreign + "/id_ed25519.pub")

            let rotated = try Octunnel.run(["keygen", "--rotate", "--home", foreign], in: dir)

            #expect(rotated.status == 77, "\(rotated)")
            #expect(rotated.stderr.contains("owned by uid \(Self.otherUser), not you"), "\(rotated.stderr)")
            #expect(
                !FileManager.default.fileExists(atPath: target), "the planted lock link made root create its target")
            #expect(try readText(foreign + "/id_ed25519.pub") == before)
            // pubkey reads the same home: the same refusal.
            #expect(try Octunnel.run(["pubkey", "--home", foreign], in: dir).status == 77)
        }
    }

    @Test(
        "a symbolic link planted as a lock file in one's own home: the change is refused, the link's target not created"
    )
    func plantedLockLinks() throws {
        try withTemporaryDirectory { dir in
            let home = dir + "/home"
            let target = try Self.keyWithLockLink(home: home, in: dir)
            let before = try readText(home + "/id_ed25519.pub")

            let rotated = try Octunnel.run(["keygen", "--rotate", "--home", home], in: dir)

            #expect(rotated.status != 0, "\(rotated)")
            #expect(rotated.stderr.contains(".keygen.lock"), "\(rotated.stderr)")
            #expect(!FileManager.default.fileExists(atPath: target), "the lock link was followed")
            #expect(try readText(home + "/id_ed25519.pub") == before)
        }
    }
}
