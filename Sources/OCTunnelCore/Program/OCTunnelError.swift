import Foundation

/// Every failure a user can meet, each with one clear sentence, the next step and its exit code.
public enum OCTunnelError: Error, LocalizedError, Equatable, Sendable {
    case keyExists(path: String)
    case noKey(path: String)
    case noSettings(path: String, profile: ProfileName = .default, role: Role = .tunnel)
    case unsafeKeyPermissions(path: String, mode: UInt16)
    /// A key reached through a symlink whose target others can read: chmod on the link would change the target.
    case unsafeLinkedKeyPermissions(path: String, target: String, mode: UInt16)
    case badKeyFile(path: String, reason: String)
    case unsafeHome(path: String, reason: String)
    case badConfig(path: String, reason: String)
    case cannotWrite(path: String, reason: String)
    case cannotRead(path: String, reason: String)
    case cannotResolve(host: String, reason: String)
    case connectionRefused(host: String, port: Int)
    case connectTimeout(host: String, port: Int, seconds: Int)
    /// A connect failed otherwise; `noRoute`: this machine has no route there at all (offline).
    case unreachable(host: String, port: Int, reason: String, noRoute: Bool = false)
    case notSSH(host: String, port: Int, detail: String)
    case noCommonAlgorithms(host: String, port: Int, detail: String)
    /// The server closed the connection before its SSH greeting: an sshd penalizing this
    /// address (PerSourcePenalties, OpenSSH ≥ 9.8), MaxStartups, fail2ban, or a proxy with nothing behind it.
    case closedBeforeGreeting(host: String, port: Int)
    case sshFailure(host: String, port: Int, detail: String)
    case hostKeyChanged(host: String, port: Int, known: [String], presented: String, file: String)
    case hostKeyRevoked(host: String, port: Int, presented: String, file: String)
    case hostKeyNotExpected(host: String, port: Int, expected: String, presented: String)
    case unknownHostRefused(host: String, port: Int, presented: String)
    /// Forwards that cannot go together (a port twice, a LAN address without --allow-lan): exit 64.
    case badForward(reason: String)
    /// A forward beside OpenCode's reached the home machine, and nothing listens there on its port.
    case nothingListeningAtHome(remote: HostPort, home: HostPort, detail: String)
    case unknownHostRefusedByStrictChecking(host: String, port: Int, presented: String)
    case hostKeyTypeUnknownToOpenSSH(host: String, port: Int, presentedType: String, presented: String, known: [String])
    case keyNotAuthorized(user: String, host: String, port: Int, fingerprint: String, publicLine: String, restrictedLine: String)
    case passwordOnly(user: String, host: String, port: Int, methods: String)
    case localPortInUse(bind: String, port: Int)
    case cannotListen(bind: String, port: Int, reason: String)
    case nothingListeningBehindVPS(remoteHost: String, remotePort: Int, reverseCommand: String)
    case forwardRefused(remoteHost: String, remotePort: Int, reason: String)
    case healthFailed(summary: String, fix: String)
    case healthNeedsPassword(generation: OpenCodeGeneration?)
    case healthPasswordRefused(generation: OpenCodeGeneration?, username: String, source: String)
    case noPasswordFile(path: String)
    /// `target`: the file a symlinked password file points at (chmod on the link would change it).
    case unsafePasswordFile(path: String, mode: UInt16, target: String? = nil)
    case badPasswordFile(path: String, reason: String)
    case notOpenCode(remoteHost: String, remotePort: Int, detail: String)
    case serviceFileNotOurs(path: String, edited: Bool, removing: Bool)
    case serviceNotInstalled(path: String, role: Role, profile: ProfileName)
    case serviceManagerFailed(command: String, detail: String)
    case unsupportedSSHConfig(host: String, directive: String, value: String, file: String)
    case badSSHConfig(path: String, reason: String)
    case hostKeyDiffersFromOpenSSH(host: String, port: Int, presented: String, known: String, file: String, line: Int, name: String)
    case wrongPassphrase(path: String)
    case passphraseUnavailable(path: String, reason: String)
    case passphrasesDiffer
    case agentUnavailable(reason: String)
    case agentHasNoUsableKeys(socket: String, skipped: [String])
    case agentKeysNotAuthorized(user: String, host: String, port: Int, tried: [String], skipped: [String], publicLine: String, restrictedLine: String)
    case notRunning(role: Role, profile: ProfileName, detail: String?)
    case statusNotAnswered(path: String, reason: String)
    /// `home up`: the VPS's sshd forbids this key to listen (sshd's own words in `reason`).
    case listenForbidden(remoteHost: String, remotePort: Int, reason: String, listenLine: String)
    /// The home machine answered through the tunnel (`HomeGatewayAnswer`) but OpenCode is not running there.
    case openCodeNotRunningAtHome(home: HostPort, detail: String, fix: String)
    /// The VPS port accepts but nothing ever answers: a forward held by a dead home session.
    case staleForward(remoteHost: String, remotePort: Int, seconds: Int)
    /// A path with a line break or escape code where it would be written into a file (a service unit).
    case controlCharactersInPath(what: String, path: String)
    /// `permission allow|always|reject ID`: OpenCode no longer waits on that request.
    case permissionNotPending(id: String)
    /// `permission answer|dismiss ID`, or a question's notification: OpenCode no longer waits on that question.
    case questionNotPending(id: String)
    /// `permission`: OpenCode could not be reached through the tunnel, or answered something else.
    case permissionFailed(detail: String)
    /// `authorize`, `keys`: the user's own ssh could not log in to the VPS (it exited 255), or is missing.
    case userSSHFailed(target: String, detail: String)
    /// `authorize`, `keys revoke`: the program on the VPS left authorized_keys unchanged (`reason` says why and the fix).
    case authorizedKeysRefused(target: String, file: String, reason: String)
    /// The VPS's answer had no line octunnel's programs print (not a POSIX shell there, or cut short).
    case vpsAnswerUnreadable(target: String, detail: String)
    /// A key's line is in place but the VPS refuses it what the line is for (its forward, its listen).
    case keyLineDoesNotWork(fingerprint: String, target: String, reason: String)
    /// `keygen --rotate --install`: the key's line on the VPS cannot rotate it (an older line, or the verb said no).
    case rotationNotOffered(target: String, reason: String)
    /// `keygen --rotate`: a rotation on the VPS is half done; its new pair waits in `.next`.
    case rotationPending(path: String)
    /// `keygen --rotate --install TARGET`: the pending rotation is towards another target.
    case rotationPendingElsewhere(path: String, target: String)
    /// The pending rotation's state no longer matches the key files.
    case rotationStateBroken(path: String, reason: String)
    /// `keygen --rotate --install`: the old key was retired but still signs in (another line lets it in).
    case oldKeyStillWorks(fingerprint: String, target: String)
    /// `authorize --account`: the login is not root, so no account nor sshd drop-in can be made (`advice`: what is open, and the lines).
    case accountNeedsRoot(target: String, account: String, advice: String)
    /// `authorize --account`: the account or its sshd drop-in could not be set up; sshd's configuration was left as it was.
    case accountNotSetUp(target: String, account: String, reason: String)
    /// `keygen --rotate --install`: a successor the rotation did not make holds the old key's line (a thief's add).
    case keyHeldByAnother(fingerprint: String, target: String, detail: String)

    /// The documented exit code for this failure.
    public var exitStatus: ExitStatus {
        switch self {
        case .keyExists, .cannotWrite, .serviceFileNotOurs, .authorizedKeysRefused, .rotationPending, .oldKeyStillWorks,
             .accountNotSetUp: return .cannotCreate
        case .userSSHFailed, .vpsAnswerUnreadable: return .unavailable
        case .keyLineDoesNotWork, .rotationNotOffered, .accountNeedsRoot, .keyHeldByAnother: return .permission
        case .rotationPendingElsewhere: return .usage
        case .rotationStateBroken: return .dataError
        case .notRunning: return .notRunning
        case .permissionNotPending, .questionNotPending: return .notPending
        case .noKey, .noSettings, .noPasswordFile, .serviceNotInstalled: return .noInput
        case .healthNeedsPassword, .healthPasswordRefused: return .openCodePassword
        case .unsafePasswordFile, .unsafeKeyPermissions, .unsafeLinkedKeyPermissions, .unsafeHome, .keyNotAuthorized, .passwordOnly, .forwardRefused, .agentKeysNotAuthorized, .listenForbidden: return .permission
        case .wrongPassphrase: return .wrongPassphrase
        case .passphraseUnavailable, .agentUnavailable, .agentHasNoUsableKeys: return .credentialsUnavailable
        case .passphrasesDiffer, .controlCharactersInPath, .badForward: return .usage
        case .badKeyFile, .badConfig, .cannotRead, .badPasswordFile: return .dataError
        case .hostKeyChanged, .hostKeyRevoked, .hostKeyNotExpected, .unknownHostRefused, .unknownHostRefusedByStrictChecking, .hostKeyTypeUnknownToOpenSSH, .hostKeyDiffersFromOpenSSH: return .hostKeyChanged
        case .unsupportedSSHConfig, .badSSHConfig: return .config
        case .cannotResolve, .connectionRefused, .connectTimeout, .unreachable, .notSSH, .closedBeforeGreeting,
             .noCommonAlgorithms, .sshFailure, .localPortInUse, .cannotListen,
             .nothingListeningBehindVPS, .healthFailed, .notOpenCode, .serviceManagerFailed, .statusNotAnswered,
             .openCodeNotRunningAtHome, .nothingListeningAtHome, .staleForward, .permissionFailed:
            return .unavailable
        }
    }

    /// The layer of the path that failed, for diagnosis output.
    public var layer: String {
        switch self {
        case .userSSHFailed, .authorizedKeysRefused, .vpsAnswerUnreadable, .keyLineDoesNotWork, .oldKeyStillWorks, .accountNeedsRoot,
             .accountNotSetUp, .keyHeldByAnother: return "authorized keys"
        case .rotationNotOffered, .rotationPending, .rotationPendingElsewhere, .rotationStateBroken: return "rotation"
        case .keyExists, .noKey, .unsafeKeyPermissions, .unsafeLinkedKeyPermissions, .badKeyFile, .wrongPassphrase, .passphraseUnavailable, .passphrasesDiffer: return "key"
        case .agentUnavailable, .agentHasNoUsableKeys, .agentKeysNotAuthorized: return "authentication"
        case .noSettings, .serviceFileNotOurs, .serviceNotInstalled: return "local files"
        case .serviceManagerFailed: return "service manager"
        case .notRunning, .statusNotAnswered: return "status"
        case .unsafeHome, .badConfig, .cannotWrite, .cannotRead, .controlCharactersInPath: return "local files"
        case .noPasswordFile, .unsafePasswordFile, .badPasswordFile: return "password file"
        case .cannotResolve: return "resolve"
        case .connectionRefused, .connectTimeout, .unreachable: return "tcp"
        case .notSSH, .closedBeforeGreeting, .noCommonAlgorithms, .sshFailure: return "ssh"
        case .hostKeyChanged, .hostKeyRevoked, .hostKeyNotExpected, .unknownHostRefused, .unknownHostRefusedByStrictChecking, .hostKeyTypeUnknownToOpenSSH, .hostKeyDiffersFromOpenSSH: return "host key"
        case .unsupportedSSHConfig, .badSSHConfig: return "ssh config"
        case .keyNotAuthorized, .passwordOnly: return "authentication"
        case .localPortInUse, .cannotListen, .badForward: return "local port"
        case .nothingListeningBehindVPS, .forwardRefused, .listenForbidden, .staleForward: return "forward"
        case .openCodeNotRunningAtHome, .nothingListeningAtHome: return "home"
        case .healthFailed, .healthNeedsPassword, .healthPasswordRefused, .notOpenCode: return "health"
        case .permissionNotPending, .questionNotPending, .permissionFailed: return "permission"
        }
    }

    public var errorDescription: String? {
        switch self {
        case .keyExists(let path):
            return "a key already exists at \(path); it was left untouched. To replace it, keeping the old pair as \(path).prev, run `octunnel keygen --rotate`."
        case .noKey(let path):
            return path.hasSuffix("/id_ed25519") ? "no key yet (\(path)): run `octunnel keygen`." : "no key at \(path): check --identity, or run `octunnel keygen`."
        case .noSettings(let path, let profile, let role):
            let named = profile.isDefault ? "" : " for profile \(profile)"
            let option = profile.isDefault ? "" : " --profile \(profile)"
            return "no saved \(role == .tunnel ? "" : "\(role) ")settings\(named) in \(path): run `\(role.saveCommand)\(option)` first."
        case .unsafeKeyPermissions(let path, let mode):
            return "private key \(path) is readable by others (mode \(String(mode, radix: 8))); ssh refuses such keys and so does octunnel. Fix: chmod 600 \(path)"
        case .unsafeLinkedKeyPermissions(let path, let target, let mode):
            return "private key \(path) is a symbolic link to \(target), which others can read (mode \(String(mode, radix: 8))); ssh refuses such keys and so does octunnel. Fix the target's mode if it is your key (chmod 600 \(target)), or replace the link with a copy of the key only you can read."
        case .badKeyFile(let path, let reason):
            return "cannot use key file \(path): \(reason)."
        case .unsafeHome(let path, let reason):
            return "refusing octunnel home \(path): \(reason)."
        case .badConfig(let path, let reason):
            return "settings file \(path) is not valid (\(reason)); it was left untouched: fix or remove it."
        case .cannotWrite(let path, let reason):
            return "cannot write \(path): \(reason)."
        case .cannotRead(let path, let reason):
            return "cannot read \(path): \(reason)."
        case .cannotResolve(let host, let reason):
            return "cannot resolve \(host) (\(reason)): check the host name and this machine's DNS."
        case .connectionRefused(let host, let port):
            return "\(Self.endpoint(host, port)) refused the connection: is sshd running there, on that port?"
        case .connectTimeout(let host, let port, let seconds):
            return "no answer from \(Self.endpoint(host, port)) after \(seconds) s: check the address, the VPS and its firewall."
        case .unreachable(let host, let port, let reason, _):
            return "cannot reach \(Self.endpoint(host, port)): \(reason)."
        case .notSSH(let host, let port, let detail):
            return "\(Self.endpoint(host, port)) is not an SSH server (\(detail)): check the port."
        case .closedBeforeGreeting(let host, let port):
            return "\(Self.endpoint(host, port)) closed the connection before its SSH greeting. An OpenSSH 9.8 or newer sshd does that while it "
                + "penalizes this address (PerSourcePenalties: 1 s for each connection that never tried to authenticate, 5 s for each failed "
                + "authentication, refusing the whole address from 15 s of penalty on, for up to 10 minutes by default, every machine behind "
                + "the same NAT too): wait and try again (tunnel up retries by itself), or exempt the address with PerSourcePenaltyExemptList. "
                + "On the VPS, `sshd -T | grep persourcepenal` shows the settings and its log says `drop connection ... penalty`. "
                + "MaxStartups, fail2ban or a proxy with nothing behind it close connections the same way."
        case .noCommonAlgorithms(let host, let port, let detail):
            return "\(Self.endpoint(host, port)) and octunnel have no algorithm in common. \(detail)"
        case .sshFailure(let host, let port, let detail):
            return "SSH session with \(Self.endpoint(host, port)) failed: \(detail)."
        case .hostKeyChanged(let host, let port, let known, let presented, let file):
            return "HOST KEY CHANGED for \(Self.endpoint(host, port)): it now presents \(presented), but \(file) trusts \(known.joined(separator: ", ")). This can be an attack; nothing was sent to it. If you know the key changed (sshd reinstalled), run `octunnel trust reset \(Self.endpoint(host, port))` and connect again."
        case .hostKeyRevoked(let host, let port, let presented, let file):
            return "\(Self.endpoint(host, port)) presents a key marked @revoked in \(file) (\(presented)); refusing to connect."
        case .hostKeyNotExpected(let host, let port, let expected, let presented):
            return "\(Self.endpoint(host, port)) presents host key \(presented), not the expected \(expected); nothing was sent to it. Check the fingerprint on the VPS with `ssh-keygen -lf /etc/ssh/ssh_host_ed25519_key.pub`."
        case .unknownHostRefused(let host, let port, let presented):
            return "\(Self.endpoint(host, port)) is not trusted yet (it presents \(presented)) and --no-trust-new was given: compare it with `ssh-keygen -lf /etc/ssh/ssh_host_ed25519_key.pub` on the VPS, then connect without --no-trust-new or with --expect-fingerprint."
        case .unknownHostRefusedByStrictChecking(let host, let port, let presented):
            return "\(Self.endpoint(host, port)) is not trusted yet (it presents \(presented)) and your ssh config says StrictHostKeyChecking yes for it: compare it with `ssh-keygen -lf /etc/ssh/ssh_host_ed25519_key.pub` on the VPS, then connect with --expect-fingerprint \(presented)."
        case .hostKeyTypeUnknownToOpenSSH(let host, let port, let presentedType, let presented, let known):
            return "OpenSSH knows \(Self.endpoint(host, port)) only by keys of other types (\(known.joined(separator: "; "))), and it now presents \(presentedType) \(presented). ssh would ask before trusting it; nothing was sent to it. If the VPS really has this key (`ssh-keygen -lf /etc/ssh/ssh_host_*_key.pub` there), accept it on purpose with --expect-fingerprint \(presented), or let the server offer a known type again."
        case .keyNotAuthorized(let user, let host, let port, let fingerprint, let publicLine, let restrictedLine):
            return "\(user)@\(Self.endpoint(host, port)) refused key \(fingerprint). Add this line to ~\(user == "root" ? "" : user)/.ssh/authorized_keys on the VPS (`octunnel pubkey`):\n  \(publicLine)\nor, to allow only the tunnel (`octunnel pubkey --restrict`):\n  \(restrictedLine)\nor let octunnel add its line through your own ssh login: `octunnel authorize \(user)@\(Self.endpoint(host, port))` (with your --remote-port; --listen on the home machine). A line added by hand that is there already is ignored when sshd's StrictModes finds your home, ~/.ssh or authorized_keys writable by group or others (`chmod go-w ~ ~/.ssh ~/.ssh/authorized_keys` on the VPS), or when the paste broke it across lines or cut it short (it must be one whole line): `octunnel keys list \(user)@\(Self.endpoint(host, port))` shows the octunnel lines that are whole."
        case .passwordOnly(let user, let host, let port, let methods):
            return "\(user)@\(Self.endpoint(host, port)) does not accept keys (it offers: \(methods)); octunnel only uses keys. Enable PubkeyAuthentication in the VPS's sshd_config and add the line from `octunnel pubkey`."
        case .localPortInUse(let bind, let port):
            return "local port \(Self.endpoint(bind, port)) is already in use: stop what uses it, or pick another with --local-port (0 picks a free one)."
        case .cannotListen(let bind, let port, let reason):
            return "cannot listen on \(Self.endpoint(bind, port)): \(reason)."
        case .nothingListeningBehindVPS(let remoteHost, let remotePort, let reverseCommand):
            return "nothing listens on VPS \(Self.endpoint(remoteHost, remotePort)): the home machine's reverse tunnel is down. Start it on the home machine:\n  \(reverseCommand)"
        case .forwardRefused(let remoteHost, let remotePort, let reason):
            return "the VPS refused to forward to \(Self.endpoint(remoteHost, remotePort)) (\(reason)): its sshd forbids it for this key. On the VPS, allow it: `AllowTcpForwarding yes` (or `local`) in sshd_config, and a permitopen=\"\(Self.endpoint(remoteHost, remotePort))\" in the key's authorized_keys line (`octunnel pubkey --restrict --remote-port \(remotePort)` prints it)."
        case .healthFailed(let summary, let fix):
            return "\(summary): \(fix)"
        case .healthNeedsPassword(let generation):
            return generation?.api.passwordNeededText
                ?? "OpenCode asks for a password: set OPENCODE_PASSWORD (and OPENCODE_SERVER_USERNAME if it is not `opencode`), or give --password-file PATH."
        case .healthPasswordRefused(let generation, let username, let source):
            let hint = (generation ?? .one).api.passwordRefusedHint
            return "OpenCode refused the password (from \(source)) for user `\(username)`: \(hint); set OPENCODE_SERVER_USERNAME if its user is not `opencode`."
        case .noPasswordFile(let path):
            return "no password file at \(path): check --password-file."
        case .unsafePasswordFile(let path, let mode, let target?):
            return "password file \(path) is a symbolic link to \(target), which others can read (mode \(String(mode, radix: 8))); octunnel refuses it, as ssh refuses such keys. Fix the target's mode if it is yours (chmod 600 \(target)), or replace the link with a copy only you can read."
        case .unsafePasswordFile(let path, let mode, nil):
            return "password file \(path) is readable by others (mode \(String(mode, radix: 8))); octunnel refuses it, as ssh refuses such keys. Fix: chmod 600 \(path)"
        case .badPasswordFile(let path, let reason):
            return "cannot use password file \(path): \(reason)."
        case .wrongPassphrase(let path):
            return "wrong passphrase for key file \(path); nothing was changed."
        case .passphraseUnavailable(let path, let reason):
            return "the passphrase for key file \(path) cannot be asked: \(reason)."
        case .passphrasesDiffer:
            return "the two passphrases differ (or are empty); nothing was written."
        case .agentUnavailable(let reason):
            return "no ssh-agent to sign in with: \(reason)."
        case .agentHasNoUsableKeys(let socket, let skipped):
            let note = skipped.isEmpty ? "" : " Skipped: \(skipped.joined(separator: ", "))."
            return "the ssh-agent at \(socket) holds no key octunnel can use (Ed25519 or ECDSA): add one with `ssh-add`.\(note) libssh2 1.10.0 signs RSA keys only with ssh-rsa (SHA-1), which OpenSSH 8.8 and later refuse."
        case .agentKeysNotAuthorized(let user, let host, let port, let tried, let skipped, let publicLine, let restrictedLine):
            let note = skipped.isEmpty ? "" : "\nSkipped (libssh2 1.10.0 cannot sign rsa-sha2, so OpenSSH 8.8 and later refuse them): \(skipped.joined(separator: ", "))."
            return "\(user)@\(Self.endpoint(host, port)) refused every ssh-agent key tried: \(tried.joined(separator: ", ")). Add this line for the first to ~\(user == "root" ? "" : user)/.ssh/authorized_keys on the VPS:\n  \(publicLine)\nor, to allow only the tunnel:\n  \(restrictedLine)\(note)"
        case .notOpenCode(let remoteHost, let remotePort, let detail):
            return "something answers on VPS \(Self.endpoint(remoteHost, remotePort)) but it is not an OpenCode server (\(detail)): check --remote-port and --home-port."
        case .serviceFileNotOurs(let path, let edited, let removing):
            let why = edited ? "was changed since `octunnel service install` wrote it" : "was not written by `octunnel service install`"
            return removing
                ? "\(path) \(why); it was left in place. Remove it yourself, or with --force."
                : "\(path) \(why); it was left untouched. Move it away, or replace it with --force."
        case .serviceNotInstalled(let path, let role, let profile):
            let option = profile.isDefault ? "" : " --profile \(profile)"
            return "not installed (no \(path)): run `octunnel service install \(role)\(option)`."
        case .serviceManagerFailed(let command, let detail):
            return "`\(command)` failed (\(detail)); the service file is in place: run that command yourself where the service manager is reachable."
        case .unsupportedSSHConfig(let host, let directive, let value, let file):
            return "\(file) sets \(directive) \(value) for \(host); octunnel does not support \(directive) yet and will not connect directly instead. Give the VPS's own address as the target, or connect through the jump host yourself."
        case .badSSHConfig(let path, let reason):
            return "cannot use the ssh config for this target (\(path)): \(reason)."
        case .notRunning(let role, let profile, let detail):
            let what = role == .tunnel ? "no tunnel running" : "no home side running"
            let named = profile.isDefault ? "" : " for profile \(profile)"
            return what + named + (detail.map { ": \($0)" } ?? "")
        case .permissionNotPending(let id):
            return "permission \(id) is no longer pending: it was already answered elsewhere, or OpenCode restarted. Nothing was sent again; `octunnel permission list` shows what still waits."
        case .questionNotPending(let id):
            return "question \(id) is no longer pending: it was already answered elsewhere, or OpenCode restarted. Nothing was sent; `octunnel permission list` shows what still waits."
        case .permissionFailed(let detail):
            return "\(detail)."
        case .userSSHFailed(let target, let detail):
            return "could not log in to the VPS with your ssh (`ssh \(target)`): \(detail). Check that `ssh \(target)` logs you in, then run this again."
        case .authorizedKeysRefused(let target, let file, let reason):
            return "\(file) on \(target) was left unchanged: \(reason)."
        case .vpsAnswerUnreadable(let target, let detail):
            return "\(target) did not answer as octunnel's program does (\(detail)); nothing is known to have changed: check with `octunnel keys list \(target)`."
        case .keyLineDoesNotWork(let fingerprint, let target, let reason):
            return "key \(fingerprint) signs in to \(target), but \(reason). Check the VPS's sshd_config (`AllowTcpForwarding`, `DisableForwarding`, `PermitOpen`, `PermitListen`) and `octunnel keys list \(target)`."
        case .rotationNotOffered(let target, let reason):
            return "the key cannot rotate itself on \(target): \(reason). Install a line that can, once, through your own login: `octunnel authorize \(target)` (with --listen on the home machine), then run this again."
        case .rotationPending(let path):
            return "a key rotation on the VPS is half done (\(path)); its new key waits beside the current one. Finish it first: `octunnel keygen --rotate --install`."
        case .rotationPendingElsewhere(let path, let target):
            return "a key rotation towards \(target) is half done (\(path)); finish it first: `octunnel keygen --rotate --install \(target)`."
        case .rotationStateBroken(let path, let reason):
            return "the pending rotation in \(path) does not match the keys: \(reason). No key was deleted; move \(path) away to start over."
        case .accountNeedsRoot(let target, let account, let advice):
            return "`ssh \(target)` is not a root login, so octunnel cannot create the account \(account) nor add its sshd drop-in there: "
                + "log in as root for `authorize --account` (e.g. `octunnel authorize --account \(account) root@HOST`); "
                + "meanwhile \(advice)."
        case .accountNotSetUp(let target, let account, let reason):
            return "the account \(account) on \(target) was not set up: \(reason); sshd's configuration was left as it was."
        case .keyHeldByAnother(let fingerprint, let target, let detail):
            return "someone else holds this key: revoke it from your own login (`octunnel keys revoke \(fingerprint) \(target)`: its line and every successor), then authorize a new key (`octunnel authorize \(target)`). On \(target), \(detail); nothing was rotated."
        case .oldKeyStillWorks(let fingerprint, let target):
            return "the old key \(fingerprint) was retired on \(target) but still signs in: another line lets it in. Remove it (`octunnel keys list \(target)`, then `octunnel keys revoke \(fingerprint) \(target)`) and run `octunnel keygen --rotate --install` again to finish."
        case .statusNotAnswered(let path, let reason):
            return "the octunnel process at \(path) did not answer (\(reason)); it may be stopped (kill -CONT) or busy."
        case .hostKeyDiffersFromOpenSSH(let host, let port, let presented, let known, let file, let line, let name):
            let fileOption = file == "~/.ssh/known_hosts" ? "" : " -f \(file)"
            return "HOST KEY DIFFERS from OpenSSH's \(file) line \(line) for \(Self.endpoint(host, port)): it presents \(presented), but that line holds \(known). This can be an attack; nothing was sent to it. If you know the key changed, remove the old one (`ssh-keygen -R '\(name)'\(fileOption)`; octunnel never writes OpenSSH's files) and connect again, or skip that file with --no-openssh-known-hosts."
        case .listenForbidden(let remoteHost, let remotePort, let reason, let listenLine):
            return "the VPS forbids this key to listen on \(Self.endpoint(remoteHost, remotePort)) (sshd: \(OutsideText.shown(reason.trimmingCharacters(in: .whitespacesAndNewlines), limit: 255))). On the VPS, allow it: `AllowTcpForwarding yes` (or `remote`) in sshd_config, and this line in authorized_keys (`octunnel pubkey --restrict --listen`):\n  \(listenLine)"
        case .openCodeNotRunningAtHome(let home, let detail, let fix):
            return "the home machine is reachable but OpenCode is not running there (\(home)): \(detail); \(fix)"
        case .badForward(let reason):
            return reason
        case .nothingListeningAtHome(let remote, let home, let detail):
            return "VPS \(remote) reaches the home machine, but nothing listens at home on \(home.port) (\(detail)): start the app there, on \(home)"
        case .controlCharactersInPath(let what, let path):
            return "\(what) \"\(OutsideText.shown(path))\" contains a control character (a line break or an escape code); octunnel will not write it into a service file. Use a path without one."
        case .staleForward(let remoteHost, let remotePort, let seconds):
            return "VPS \(Self.endpoint(remoteHost, remotePort)) accepts connections but nothing answered within \(seconds) s: a forward held by a home session that died without closing. Restart `octunnel home up` on the home machine: with the authorized_keys line `octunnel pubkey --restrict --listen` prints, it ends that dead session and takes the port back within seconds. With an older line it waits for the VPS's sshd to notice: `ClientAliveInterval 15` and `ClientAliveCountMax 3` in sshd_config do that within 45 s only while nothing connects to the port (this check and every app retrying count); otherwise TCP gives up after 15-30 min."
        }
    }

    static func endpoint(_ host: String, _ port: Int) -> String {
        HostPort(host: host, port: port).description
    }
}
