import Foundation

/// `keygen --rotate --install`: the key replaces itself on the VPS, with no admin login, through
/// the rotation verbs of its own line's forced command, while `tunnel up` / `home up` keep
/// serving. The order, each step safe to stop after (a SIGKILL, a lost network) and finished by
/// running the rotation again, with at least one key that signs in at every moment:
/// 1. pending: under the key lock, the new pair as `id_ed25519.next` and the `RotationState`;
/// 2. signed in with the OLD key, the add verb puts the successor line beside the old one;
/// 3. signed in with the NEW key, its forward opens (laptop) or its listen is granted (home);
/// 4. locally, the current pair becomes `.prev` and `.next` the current one: a running
///    `tunnel up` / `home up` signs in with the new key at its next reconnect, which works;
/// 5. signed in with the old key (`.prev`), the retire verb removes its line (only if the
///    successor is there);
/// 6. the old key is refused;
/// 7. the new key proves its line again; `.next` and the state file go.
/// An add never replaces a successor: one the rotation did not make (a thief's, with the stolen
/// old key) stops it (`keyHeldByAnother`, the new pair discarded); the retire names the successor
/// that stays, and it must be the new key.
/// Run again, each step first asks the files and the VPS whether it is done.
public struct KeyRotation {
    public let store: KeyStore
    /// The target and host key trust (`tunnel up`'s); the key is chosen per step.
    public let check: KeyCheck
    /// The target as the user gave it, recorded in the state.
    public let target: String
    public let role: Role
    /// What the new key must prove it may do: the tunnel's forward (its VPS end) or the home's listen.
    public let end: HostPort
    /// The new key's comment.
    public let comment: String

    public init(store: KeyStore, check: KeyCheck, target: String, role: Role, end: HostPort, comment: String) {
        self.store = store
        self.check = check
        self.target = target
        self.role = role
        self.end = end
        self.comment = comment
    }

    /// Whose key a rotation replaces: the pending rotation's role; else the home's with
    /// `listen`; else the home's when this machine saved only `home up` settings for the profile
    /// (a home machine), else the laptop's.
    public static func role(
        listen: Bool, pending: RotationState?, directory: OctunnelDirectory, profile: ProfileName
    ) -> Role {
        if let pending { return pending.role }
        if listen { return .home }
        if let saved = try? SavedSettings.load(from: directory, profile: profile), saved.has(.home), !saved.has(.tunnel)
        {
            return .home
        }
        return .tunnel
    }

    /// Why rotating octunnel's own key would not change what `settings` sign in with, or nil:
    /// they use the ssh-agent's keys (`--agent`, saved), or another key file (`--identity`, the
    /// ssh config's IdentityFile), so a rotation would retire a key the tunnel never used.
    public static func keyProblem(_ settings: ResolvedSettings, directory: OctunnelDirectory) -> String? {
        let target = settings.target.description
        if settings.useAgent {
            return "the \(settings.role) settings for \(target) sign in with "
                + "the ssh-agent's keys (--agent), not octunnel's key; rotate those keys yourself"
        }
        let used = settings.keyPath(directory: directory)
        guard used == directory.privateKeyPath else {
            let source = settings.flags.identity != nil ? "--identity" : "the ssh config's IdentityFile"
            return "\(settings.role) up signs in to \(target) with \(used) (\(source)), "
                + "not octunnel's key \(directory.privateKeyPath), the one --install rotates"
        }
        return nil
    }

    /// How it went.
    public struct Outcome: Sendable {
        public let old: String
        public let new: SSHPublicKey
        /// Whether an earlier, interrupted run was finished (rather than a new one started).
        public let resumed: Bool
        /// What the new key proved.
        public let proof: String
        /// An older `.prev` moved aside at the swap.
        public let archived: String?
    }

    /// `OCTUNNEL_FAULT=rotation-stop-after-N`: the process ends (`_exit(137)`, as a SIGKILL
    /// looks to its parent) right after step N, for the tests that stop a rotation at each step.
    static let stopAfter: Int? = {
        let value = ProcessInfo.processInfo.environment["OCTUNNEL_FAULT"] ?? ""
        guard value.hasPrefix("rotation-stop-after-") else { return nil }
        return Int(value.dropFirst("rotation-stop-after-".count))
    }()

    private func done(_ step: Int) {
        if Self.stopAfter == step { Syscall.exitNow(137) }
    }

    /// Runs (or finishes) the rotation; `say` gets one line per step. With `ifOlderThan`, a key
    /// younger than that many days (by its file's time: the last swap or keygen) is left alone
    /// (nil, said), unless a rotation is pending.
    public func run(ifOlderThan days: Int? = nil, say: (String) -> Void) throws -> Outcome? {
        try store.whileLocked { () throws -> Outcome? in
            if let days, !FileBytes.exists(store.rotationStatePath) {
                let age = Self.ageInDays(store.privateKeyPath)
                guard age >= days else {
                    say("The key is \(age) day(s) old: not rotated before it is \(days) days old.")
                    return nil
                }
            }
            return try runLocked(say: say)
        }
    }

    /// Whole days since the file at `path` was last written (0 when that cannot be read).
    static func ageInDays(_ path: String, now: Date = Date()) -> Int {
        guard let written = (try? FileManager.default.attributesOfItem(atPath: path))?[.modificationDate] as? Date
        else { return 0 }
        return max(0, Int(now.timeIntervalSince(written) / 86400))
    }

    private func runLocked(say: (String) -> Void) throws -> Outcome {
        // 1. The pending state: the new pair in .next, the fingerprints on disk.
        let state: RotationState
        let resumed: Bool
        if let pending = try RotationState.load(store) {
            guard pending.target == target else {
                throw RotationError.rotationPendingElsewhere(path: store.rotationStatePath, target: pending.target)
            }
            state = pending
            resumed = true
            say("Finishing the rotation started \(pending.started) (\(pending.old) → \(pending.new)).")
        } else {
            let old = try store.publicHalf()
            let new = try store.makeNext(comment: comment)
            state = RotationState(old: old.fingerprint, new: new.fingerprint, target: target, role: role, end: end)
            try state.save(store)
            resumed = false
            say("New key \(new.fingerprint) in \(store.nextPrivateKeyPath); replacing \(old.fingerprint) on \(target).")
        }
        done(1)

        guard let end = state.endHostPort else {
            throw RotationError.rotationStateBroken(
                path: store.rotationStatePath,
                reason: "its end \"\(OutsideText.shown(state.end, limit: 100))\" is not HOST:PORT")
        }
        let current = try store.publicHalf()
        let swapped = current.fingerprint == state.new
        let newPath = swapped ? store.privateKeyPath : store.nextPrivateKeyPath
        let oldPath = swapped ? store.previousPrivateKeyPath : store.privateKeyPath
        let newKey = try store.publicHalf(at: newPath)
        guard newKey.fingerprint == state.new, try store.publicHalf(at: oldPath).fingerprint == state.old else {
            throw RotationError.rotationStateBroken(
                path: store.rotationStatePath,
                reason: "the key files no longer hold \(state.old) and \(state.new) (current: \(current.fingerprint))")
        }

        // 2. The successor line, added by the old line's own verb.
        if !swapped {
            let answer = try check.run(keyPath: oldPath, KeyRotationVerb.addCommand(for: newKey))
            let report: AuthorizedKeysReport
            do {
                report = try expectReport(
                    answer, verb: KeyRotationVerb.add, accepted: [.added, .present], old: state.old)
            } catch {
                // A first run the VPS refused at once: nothing names the new key anywhere, so the
                // rotation is called off (state first, then .next) rather than left pending. So
                // is one whose old line holds another successor (an add never replaces one).
                if case AuthorizedKeysError.keyHeldByAnother = error {
                    try RotationState.remove(store)
                    try store.discardNext()
                } else if !resumed, case RotationError.rotationNotOffered = error {
                    try RotationState.remove(store)
                    try store.discardNext()
                }
                throw error
            }
            say("The VPS \(report.result == .present ? "already has" : "added") the new key's line beside the old one.")
        }
        done(2)

        // 3. The new key does the line's job.
        let proof: String
        switch try check.prove(keyPath: newPath, role: state.role, end: end) {
        case .works(let words):
            proof = words
            say("The new key signs in: \(words).")
        case .refused(let why):
            throw AuthorizedKeysError.keyLineDoesNotWork(fingerprint: newKey.fingerprint, target: target, reason: why)
        }
        done(3)

        // 4. The local swap: a running tunnel picks the new key up at its next reconnect.
        let (_, archived) = try store.promoteNext()
        if !swapped { say("\(store.privateKeyPath) is the new key; the old one is \(store.previousPrivateKeyPath).") }
        done(4)

        try retireOld(state, newKey: newKey, end: end, say: say)
        return Outcome(old: state.old, new: newKey, resumed: resumed, proof: proof, archived: archived)
    }

    /// Steps 5 to 7: the old line retired by its own verb, the old key refused, the new key proved again.
    private func retireOld(_ state: RotationState, newKey: SSHPublicKey, end: HostPort, say: (String) -> Void) throws {
        // 5. The old line goes, removed by its own verb (only once its successor is there).
        // One refused sign-in per run at most: OpenSSH 9.8+ penalizes an address for each.
        let previousPath = store.previousPrivateKeyPath
        var oldRefused = false
        do {
            let answer = try check.run(keyPath: previousPath, KeyRotationVerb.retire)
            let report = try expectReport(
                answer, verb: KeyRotationVerb.retire, accepted: [.retired, .absent], old: state.old)
            // The successor that stays must be the new key: never "Rotated" with another key in the lineage.
            if let successor = report.successor, successor != OctunnelKeyLine.tag(for: newKey) {
                throw AuthorizedKeysError.keyHeldByAnother(
                    fingerprint: state.old, target: target,
                    detail: "the old key's line was retired for a successor that is not the new key (tag \(successor))")
            }
            say("The VPS removed the old key's line.")
        } catch {
            guard case SignInError.keyNotAuthorized = error else { throw error }
            oldRefused = true
        }
        done(5)

        // 6. The old key is refused; the rotation is over.
        if !oldRefused, try check.signsIn(keyPath: previousPath) {
            throw AuthorizedKeysError.oldKeyStillWorks(fingerprint: state.old, target: target)
        }
        // 7. The new key is proved again: the line that stays is its own, and works.
        if case .refused(let why) = try check.prove(keyPath: store.privateKeyPath, role: state.role, end: end) {
            throw AuthorizedKeysError.keyLineDoesNotWork(fingerprint: newKey.fingerprint, target: target, reason: why)
        }
        try store.removeNext()
        try RotationState.remove(store)
        say("The old key \(state.old) is refused now; kept locally as \(previousPath).")
    }

    /// The verb's report, if its result is one of `accepted`; otherwise the reason, as an error.
    private func expectReport(
        _ output: String, verb: String, accepted: Set<AuthorizedKeysReport.Result>,
        old: String
    ) throws -> AuthorizedKeysReport {
        guard let report = AuthorizedKeysReport.parse(output) else {
            throw RotationError.rotationNotOffered(
                target: target,
                reason: "the key's line on the VPS did not answer `\(verb)` (\(KeyAuthorization.shown(output))"
                    + "): it was installed before octunnel could rotate keys in place")
        }
        if report.result == .refused, report.reason == "held" {
            throw AuthorizedKeysError.keyHeldByAnother(
                fingerprint: old, target: target, detail: "`\(verb)` was \(report.summary)")
        }
        guard accepted.contains(report.result) else {
            throw RotationError.rotationNotOffered(target: target, reason: "`\(verb)` was \(report.summary)")
        }
        return report
    }
}
