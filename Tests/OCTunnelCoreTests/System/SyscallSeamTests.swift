import Foundation
@testable import OCTunnelCore
import OCTunnelTestSupport
import Testing

/// Whatever differs between Linux and macOS sits in Sources/OCTunnelCore/System/ (issue 27):
/// no other source file imports Glibc, calls `Glibc.` anything or names Darwin. That is what
/// keeps a macOS build one step away.
@Suite("the syscall seam: only System/ names Glibc or Darwin, reads errno or calls the C library", .ownThreads)
struct SyscallSeamTests {
    /// The one folder of the core that may name either platform.
    static let systemFolder = "Sources/OCTunnelCore/System/"
    /// The module that imports each platform's C library, a file per platform (issue 49).
    static let libcFolder = "Sources/OCTunnelLibc/"

    /// Whether `path` is of the system layer: System/ or the libc module beneath it.
    static func isSystemLayer(_ path: String) -> Bool { path.hasPrefix(systemFolder) || path.hasPrefix(libcFolder) }

    /// Files allowed to name a platform outside System/ for now: none.
    static let notYetConverted: Set<String> = []

    /// A package tree of its own for a check to fail on: System/, Engine/ and `also`, empty.
    static func plantedTree(_ name: String, also: [String] = []) throws -> TempDirectory {
        let tree = try TempDirectory(name)
        for folder in ["Sources/OCTunnelCore/System", "Sources/OCTunnelCore/Engine"] + also {
            try FileManager.default.createDirectory(atPath: tree.file(folder), withIntermediateDirectories: true)
        }
        return tree
    }

    /// The package root: four folders up from this file (Tests/OCTunnelCoreTests/System/…).
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent().path

    /// The .swift files under `root`/Sources outside System/ and `allowed`, in order, each with its
    /// path from `root` and its text; and how many .swift files Sources holds in all.
    static func sourcesAbove(
        _ root: String, allowed: Set<String>
    ) throws -> (count: Int, [(path: String, text: String)]) {
        let files = try FileManager.default.subpathsOfDirectory(atPath: root + "/Sources").filter {
            $0.hasSuffix(".swift")
        }.sorted()
        let above = try files.map { "Sources/" + $0 }.filter { !isSystemLayer($0) && !allowed.contains($0) }.map {
            path in
            (path: path, text: try String(contentsOfFile: root + "/" + path, encoding: .utf8))
        }
        return (files.count, above)
    }

    /// Every line of a .swift file under `root`/Sources, outside System/ and not in `allowed`,
    /// that names a platform: "path:line: text".
    static func platformNames(under root: String, allowed: Set<String>) throws -> (files: Int, found: [String]) {
        let (count, sources) = try sourcesAbove(root, allowed: allowed)
        var found: [String] = []
        for (path, text) in sources {
            for (index, line) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated()
            where line.contains("import Glibc") || line.contains("Glibc.") || line.contains("Darwin") {
                found.append("\(path):\(index + 1): \(line.trimmingCharacters(in: .whitespaces))")
            }
        }
        return (count, found)
    }

    /// The C library calls octunnel makes or could make, by name: outside System/ none may be
    /// called (a method of the same name, defined in that file, is the file's own).
    static let libcCalls: Set<String> = """
        open close read write recv send recvmsg sendmsg unlink lstat stat fstat chmod fchmod fchown chown fsync rename mkdir rmdir \
        pipe pipe2 waitpid kill fcntl ioctl setsockopt getsockopt socket bind listen accept accept4 connect shutdown poll select \
        getpid getppid getuid geteuid isatty tcgetattr tcsetattr signal sigaction dup dup2 execve posix_spawn posix_spawnp getpwuid \
        getpwnam getenv setenv umask mkstemp mkdtemp realpath readlink symlink link ftruncate flock usleep nanosleep clock_gettime \
        getaddrinfo freeaddrinfo gai_strerror inet_pton inet_ntop getifaddrs freeifaddrs if_nametoindex sysconf gethostname uname \
        getsockname getpeername lseek access _exit raise setsid dlsym
        """.split(whereSeparator: { $0 == " " || $0 == "\n" }).map(String.init).reduce(into: []) { $0.insert($1) }

    /// The C library calls that take no argument: a bare `getpid()` is one of them.
    static let noArgumentCalls: Set<String> = [
        "getpid", "getppid", "getuid", "geteuid", "getgid", "getegid", "setsid", "fork", "sync", "pause",
    ]

    /// A line's code: its comment cut, its string literals emptied, what they interpolate kept
    /// after it (`"gui/\\(getuid())"` is a call).
    static func codeOf(_ line: Substring, literal: Regex<AnyRegexOutput>) -> String {
        let code = String(line.split(separator: "//", maxSplits: 1, omittingEmptySubsequences: false).first ?? "")
        var interpolated: [String] = []
        var rest = code[...]
        while let start = rest.range(of: "\\(") {
            var depth = 1, end = start.upperBound
            while end < rest.endIndex, depth > 0 {
                if rest[end] == "(" { depth += 1 } else if rest[end] == ")" { depth -= 1 }
                end = rest.index(after: end)
            }
            interpolated.append(String(rest[start.upperBound..<(depth == 0 ? rest.index(before: end) : end)]))
            rest = rest[end...]
        }
        return ([code.replacing(literal, with: "\"\"")] + interpolated).joined(separator: " ; ")
    }

    /// Every use of `errno`, `strerror` or a C library call by name in a .swift file under
    /// `root`/Sources outside System/ and not in `allowed`: "path:line: name". Comments and
    /// string literals are skipped.
    static func systemCalls(under root: String, allowed: Set<String>) throws -> [String] {
        let (_, sources) = try sourcesAbove(root, allowed: allowed)
        let errnoPattern = try Regex(#"(?:^|[^\w.])(errno|strerror)\b"#)
        let literal = try Regex(#""(?:[^"\\]|\\.)*""#)
        // Every call, nested ones too (`Int(getpid())`); one with no arguments counts when the C
        // function takes none (`getpid()`, while `send()` is a closure's or a method's).
        let callPattern = try Regex(#"\b([A-Za-z_][A-Za-z0-9_]*)\((\))?"#)
        let definition = try Regex(#"(?:func|case)\s+([A-Za-z_][A-Za-z0-9_]*)\s*[(<]"#)
        var found: [String] = []
        for (path, text) in sources {
            let own = Set(text.matches(of: definition).compactMap { $0.output[1].substring.map(String.init) })
            for (index, line) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
                let code = codeOf(line, literal: literal)
                for match in code.matches(of: errnoPattern) {
                    found.append("\(path):\(index + 1): \(match.output[1].substring ?? "")")
                }
                for match in code.matches(of: callPattern) {
                    guard let name = match.output[1].substring.map(String.init), libcCalls.contains(name),
                        !own.contains(name),
                        match.range.lowerBound == code.startIndex
                            || code[code.index(before: match.range.lowerBound)] != ".",
                        match.output[2].substring == nil || noArgumentCalls.contains(name)
                    else { continue }
                    found.append("\(path):\(index + 1): \(name)")
                }
            }
        }
        return found
    }

    /// The C library's types: its `_t` typedefs (`pid_t`, `mode_t`, `uid_t`, `off_t`,
    /// `socklen_t`, …) and its structs; above System/ a process id, a user id or a mode is a
    /// Swift integer and an address a System/ type (issue 57).
    static let cTypePattern =
        #"\b([a-z][a-z0-9]*_t|sockaddr(?:_[a-z0-9]+)?|pollfd|termios|timespec|timeval|ucred|passwd|ifaddrs|addrinfo|rlimit)\b"#

    /// Files that may still name a C type above System/, each with its reason.
    static let cTypesNotYetMoved: Set<String> = [
        // The poll set is an array of `pollfd` that `Syscall.poll` takes (issue 56's room; a
        // typed poll set in System/ is the next step).
        "Sources/OCTunnelCore/Engine/EventLoop.swift"
    ]

    /// Every C type of `cTypePattern` in a .swift file under `root`/Sources outside System/ and
    /// `allowed`: "path:line: name". Comments and string literals are skipped.
    static func cTypes(under root: String, allowed: Set<String>) throws -> [String] {
        try matches(of: cTypePattern, group: 1, under: root, allowed: allowed)
    }

    /// Every match of `pattern` (its `group`) in the code of a .swift file under `root`/Sources
    /// outside System/ and `allowed`: "path:line: match". Comments and string literals are skipped.
    static func matches(of pattern: String, group: Int, under root: String, allowed: Set<String>) throws -> [String] {
        let (_, sources) = try sourcesAbove(root, allowed: allowed)
        let pattern = try Regex(pattern)
        let literal = try Regex(#""(?:[^"\\]|\\.)*""#)
        var found: [String] = []
        for (path, text) in sources {
            for (index, line) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
                let code = codeOf(line, literal: literal)
                for match in code.matches(of: pattern) {
                    found.append("\(path):\(index + 1): \(match.output[group].substring ?? "")")
                }
            }
        }
        return found
    }

    /// The C library's constants System/ gives names to (issue 49, a seam for types too): poll
    /// events (`PollEvents`), file types and modes (`FileStatus`), send and receive flags
    /// (`MessageOptions`), open flags, signals (`Signal`) and their actions, and error numbers
    /// (`Errno`): none is named above System/.
    static let constantPattern =
        #"\b(POLL(IN|OUT|HUP|ERR|NVAL|PRI)|S_IF[A-Z]+|S_IS[A-Z]+|MSG_[A-Z]+|O_(RDONLY|WRONLY|RDWR|CREAT|APPEND|TRUNC|EXCL|NONBLOCK|NOFOLLOW|CLOEXEC|NOCTTY)|SIG(INT|TERM|USR1|USR2|PIPE|KILL|HUP|CHLD|ALRM|QUIT)|SA_[A-Z]+|E(INTR|AGAIN|WOULDBLOCK|NOENT|EXIST|CONNREFUSED|CONNRESET|CONNABORTED|PIPE|PERM|ACCES|INVAL|ADDRINUSE|INPROGRESS|NAMETOOLONG|SRCH|LOOP|FBIG|BADF|NOTCONN|TIMEDOUT|HOSTUNREACH|NETUNREACH))\b"#

    /// Every C constant of `constantPattern` in a .swift file under `root`/Sources outside
    /// System/: "path:line: name". Comments and string literals are skipped.
    static func constants(under root: String) throws -> [String] {
        try matches(of: constantPattern, group: 0, under: root, allowed: [])
    }

    /// The libssh2 boundary: libssh2 takes the session's socket by number and calls back with
    /// numbers of its own (the agent's socket), so these files may hold one.
    static let libssh2Boundary: Set<String> = [
        "Sources/OCTunnelCore/SSH/LibSSH2.swift", "Sources/OCTunnelCore/SSH/SSHSession.swift",
        "Sources/OCTunnelCore/SSH/BatchedSocketIO.swift",
    ]

    /// The `Syscall` calls that take or make a descriptor by number.
    static let descriptorCalls = """
        close read write receive transmit sendNoSignal recv accept shutdownBoth shutdownSending pendingError setReceiveTimeout \
        unsentBytes acknowledgeNow isWritable waitWritable waitReadable setNonBlocking setCloseOnExec peerCredentials socket \
        connect bind listen open
        """.split(whereSeparator: { $0 == " " || $0 == "\n" }).joined(separator: "|")

    /// Every place outside System/ and `allowed` where a descriptor is a bare number: a
    /// `Syscall` call that takes or makes one, an `OwnedDescriptor` made from a number, or an
    /// `Int32` property, parameter or variable named as a descriptor. "path:line: match".
    static func bareDescriptors(under root: String, allowed: Set<String>) throws -> [String] {
        let (_, sources) = try sourcesAbove(root, allowed: allowed)
        let patterns = [
            try Regex("Syscall\\.(?:\(descriptorCalls))\\("),
            try Regex(#"OwnedDescriptor\("#),
            try Regex(#"\b(?:fd|fds|socket|sockets|listener|listeners|descriptor|wake\w*)\s*:\s*\[?Int32\]?"#),
        ]
        var found: [String] = []
        for (path, text) in sources {
            for (index, line) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
                let code = line.split(separator: "//", maxSplits: 1, omittingEmptySubsequences: false).first ?? ""
                for pattern in patterns {
                    for match in code.matches(of: pattern) {
                        found.append("\(path):\(index + 1): \(code[match.range])")
                    }
                }
            }
        }
        return found
    }

    /// One check of the tree above System/: what it finds there, and the fix its failure names.
    struct LayerCheck: Sendable, CustomTestStringConvertible {
        let testDescription: String
        let find: @Sendable (String) throws -> [String]
        let found: String

        static let all = [
            LayerCheck(
                testDescription: "no errno, no strerror, no C library call by name (issue 39)",
                find: { try SyscallSeamTests.systemCalls(under: $0, allowed: SyscallSeamTests.notYetConverted) },
                found:
                    "system calls outside \(SyscallSeamTests.systemFolder) (give System/ a wrapper that throws a SystemError)"
            ),
            LayerCheck(
                testDescription: "no C type (pid_t, mode_t, uid_t, off_t, socklen_t, sockaddr, "
                    + "…) but in the files that wait their turn (issue 57)",
                find: { try SyscallSeamTests.cTypes(under: $0, allowed: SyscallSeamTests.cTypesNotYetMoved) },
                found: "C types outside \(SyscallSeamTests.systemFolder) (give System/ a Swift type or integer for it)"),
            LayerCheck(
                testDescription: "no C constant (poll events, file types, message and open flags, signals, "
                    + "error numbers) but through System/'s types (issue 49)",
                find: { try SyscallSeamTests.constants(under: $0) },
                found: "C constants outside \(SyscallSeamTests.systemFolder) (give System/ a typed name for it)"),
            LayerCheck(
                testDescription:
                    "descriptors are owned values, never bare numbers, but at the libssh2 boundary (issue 39)",
                find: { try SyscallSeamTests.bareDescriptors(under: $0, allowed: SyscallSeamTests.libssh2Boundary) },
                found:
                    "bare descriptors outside \(SyscallSeamTests.systemFolder) (hold an OwnedDescriptor and call its methods)"
            ),
        ]
    }

    @Test("above System/: each check of the layer finds nothing in the tree", arguments: LayerCheck.all)
    func nothingAboveTheLayer(_ check: LayerCheck) throws {
        let found = try check.find(Self.root)
        #expect(found.isEmpty, "\(check.found):\n\(found.joined(separator: "\n"))")
    }

    /// A check made to fail: files planted in a tree of its own (in System/, a file with nothing to
    /// find, and Engine/Loop.swift with what the check must find), and the lines of Loop.swift it finds, in order.
    struct PlantedCase: Sendable, CustomTestStringConvertible {
        let testDescription: String
        let tree: String
        let system: String, clean: String, loop: String
        let find: @Sendable (String) throws -> [String]
        let found: [String]

        static let all = [
            PlantedCase(
                testDescription:
                    "the call check fails on a planted errno, strerror and libc call, naming file and line; "
                    + "a method of its own name, comments, strings and System/ pass",
                tree: "seam-calls", system: "let fd = open(path, 0)\nif errno == EINTR {}\n",
                clean: """
                    final class Pipe {
                        func close() {}
                        func read(_ n: Int) {}
                        func done() { close(); read(3); Syscall.close(4) }  // close(5) in a comment
                    }
                    let text = "unlink(path) in a string"
                    """,
                loop: """
                    import Foundation
                    let gone = unlink(path)
                    if errno == ENOENT { print(String(cString: strerror(errno))) }
                    let me = Int(getpid()), domain = "gui/\\(getuid())"
                    """,
                find: { try SyscallSeamTests.systemCalls(under: $0, allowed: []) },
                found: ["2: unlink", "3: errno", "3: strerror", "3: errno", "4: getpid", "4: getuid"]),
            PlantedCase(
                testDescription: "the C type check fails on planted C types, naming file and line; comments, strings, "
                    + "Swift names with _t inside and System/ pass",
                tree: "seam-types", system: "static func kill(_ pid: pid_t) {}\nvar address = sockaddr_un()\n",
                clean: """
                    let pid: Int32 = Syscall.processID  // a pid_t in a comment
                    let text = "mode_t in a string", at_tail = 1, socket_type = 2
                    """,
                loop: """
                    let pid = pid_t(snapshot.pid)
                    func write(mode: mode_t, owner: uid_t, length: socklen_t) {}
                    var address = sockaddr_in6(), size: off_t = 0
                    """,
                find: { try SyscallSeamTests.cTypes(under: $0, allowed: []) },
                found: ["1: pid_t", "2: mode_t", "2: uid_t", "2: socklen_t", "3: sockaddr_in6", "3: off_t"]),
            PlantedCase(
                testDescription: "the constant check fails on planted constants, naming file and line; comments, "
                    + "strings and System/ pass",
                tree: "seam-constants", system: "let events = POLLIN | POLLOUT\n",
                clean:
                    "let events: PollEvents = .readable  // POLLIN in a comment\nlet text = \"SIGUSR1 in a string\"\n",
                loop: """
                    set.watch(socket, events: Int32(POLLIN), owner: self, tag: 0)
                    if info.st_mode & S_IFMT == S_IFDIR { try Syscall.signal(pid, SIGUSR1) }
                    if error.code == ECONNREFUSED { _ = socket.receive(&b, 1, flags: Int32(MSG_PEEK)) }
                    """,
                find: { try SyscallSeamTests.constants(under: $0) },
                found: ["1: POLLIN", "2: S_IFMT", "2: S_IFDIR", "2: SIGUSR1", "3: ECONNREFUSED", "3: MSG_PEEK"]),
            PlantedCase(
                testDescription: "the descriptor check fails on a planted Int32 descriptor, "
                    + "a Syscall call by number and a hand-made OwnedDescriptor, "
                    + "naming file and line; owned calls and System/ pass",
                tree: "seam-descriptors",
                system: "let fd: Int32 = Syscall.socket(2, .stream, [])\nlet owned = OwnedDescriptor(fd)\n",
                clean: """
                    final class Client {
                        let socket: OwnedDescriptor
                        let port: Int32 = 0
                        func done() { socket.close(); _ = socket.receive(nil, 0) }  // Syscall.close(fd) in a comment
                    }
                    """,
                loop: """
                    final class Loop {
                        private let listener: Int32
                        func stop() { Syscall.close(listener) }
                        func adopt(_ fd: Int32) -> OwnedDescriptor { OwnedDescriptor(fd) }
                    }
                    """,
                find: { try SyscallSeamTests.bareDescriptors(under: $0, allowed: []) },
                found: ["2: listener: Int32", "3: Syscall.close(", "4: OwnedDescriptor(", "4: fd: Int32"]),
        ]
    }

    @Test("each check of the layer fails on what is planted, naming file and line", arguments: PlantedCase.all)
    func layerCheckCanFail(_ planted: PlantedCase) throws {
        let tree = try Self.plantedTree(planted.tree)
        try tree.write("Sources/OCTunnelCore/System/Calls.swift", planted.system)
        try tree.write("Sources/OCTunnelCore/Engine/Clean.swift", planted.clean)
        try tree.write("Sources/OCTunnelCore/Engine/Loop.swift", planted.loop)
        #expect(try planted.find(tree.path) == planted.found.map { "Sources/OCTunnelCore/Engine/Loop.swift:" + $0 })
    }

    @Test("no source file outside System/ imports Glibc, calls Glibc. or names Darwin")
    func onlySystemNamesThePlatform() throws {
        let (files, found) = try Self.platformNames(under: Self.root, allowed: Self.notYetConverted)
        #expect(files > 50, "found no sources under \(Self.root)/Sources")
        #expect(
            found.isEmpty,
            "platform names outside \(Self.systemFolder) (put the call in System/):\n\(found.joined(separator: "\n"))")
    }

    @Test("the check fails on a file outside System/, naming the file and line; System/ and allowed files pass")
    func checkCanFail() throws {
        let tree = try Self.plantedTree("seam", also: ["Sources/octunnel"])
        try tree.write(
            "Sources/OCTunnelCore/System/Calls.swift",
            "#if canImport(Glibc)\nimport Glibc\n#elseif canImport(Darwin)\nimport Darwin\n#endif\n")
        try tree.write("Sources/OCTunnelCore/Engine/Clean.swift", "import Foundation\nlet x = Syscall.close(3)\n")
        try tree.write("Sources/OCTunnelCore/Engine/Allowed.swift", "import Glibc\n")
        try tree.write(
            "Sources/OCTunnelCore/Engine/Loop.swift", "import Foundation\n\nlet ready = Glibc.poll(&fds, 1, 0)\n")
        try tree.write("Sources/octunnel/Main.swift", "#if canImport(Glibc)\nimport Glibc\n#endif\n")
        let (files, found) = try Self.platformNames(
            under: tree.path, allowed: ["Sources/OCTunnelCore/Engine/Allowed.swift"])
        #expect(files == 5)
        #expect(
            found == [
                "Sources/OCTunnelCore/Engine/Loop.swift:3: let ready = Glibc.poll(&fds, 1, 0)",
                "Sources/octunnel/Main.swift:2: import Glibc",
            ])
    }

    /// Every line of a .swift file under `root`/Sources that imports a platform's C library:
    /// "path:line".
    static func libcImports(under root: String) throws -> [String] {
        let sources = root + "/Sources"
        let files = try FileManager.default.subpathsOfDirectory(atPath: sources).filter { $0.hasSuffix(".swift") }
            .sorted()
        var found: [String] = []
        for file in files {
            let text = try String(contentsOfFile: sources + "/" + file, encoding: .utf8)
            for (index, line) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated()
            where line.range(of: #"^\s*(@_exported\s+)?import\s+(Glibc|Darwin)\b"#, options: .regularExpression) != nil
            {
                found.append("Sources/\(file):\(index + 1)")
            }
        }
        return found
    }

    @Test(
        "each platform's C library is imported in one file, of the libc module: Glibc in Linux.swift, Darwin in Darwin.swift (issue 49)"
    )
    func oneImportPerPlatform() throws {
        #expect(
            try Self.libcImports(under: Self.root) == [
                "Sources/OCTunnelLibc/Darwin.swift:7", "Sources/OCTunnelLibc/Linux.swift:7",
            ])
        let tree = try Self.plantedTree("seam-imports")
        try tree.write(
            "Sources/OCTunnelCore/System/Calls.swift",
            "#if canImport(Glibc)\nimport Glibc\n#endif\n// import Darwin in a comment\n")
        #expect(try Self.libcImports(under: tree.path) == ["Sources/OCTunnelCore/System/Calls.swift:2"])
    }

    /// Every type the core declares above System/, named in a file of System/ (comments and
    /// strings skipped): "path:line: name". System/ is the bottom layer: it knows nothing above it.
    static func namesFromAbove(under root: String) throws -> [String] {
        let core = root + "/Sources/OCTunnelCore"
        let files = try FileManager.default.subpathsOfDirectory(atPath: core).filter { $0.hasSuffix(".swift") }.sorted()
        let declaration = try Regex(#"(?:struct|class|enum|protocol|typealias|actor)\s+([A-Z][A-Za-z0-9_]*)"#)
        let literal = try Regex(#""(?:[^"\\]|\\.)*""#)
        var above = Set<String>(), own = Set<String>()
        for file in files {
            let text = try String(contentsOfFile: core + "/" + file, encoding: .utf8)
            for match in text.matches(of: declaration) {
                guard let name = match.output[1].substring else { continue }
                if file.hasPrefix("System/") { own.insert(String(name)) } else { above.insert(String(name)) }
            }
        }
        // A nested name System/ declares too (its own `Result`, `Kind`) is its own.
        above.subtract(own)
        var found: [String] = []
        for file in files where file.hasPrefix("System/") {
            let text = try String(contentsOfFile: core + "/" + file, encoding: .utf8)
            for (index, line) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
                let code = String(
                    line.split(separator: "//", maxSplits: 1, omittingEmptySubsequences: false).first ?? ""
                ).replacing(literal, with: "\"\"")
                for word in code.split(whereSeparator: { !$0.isLetter && !$0.isNumber && $0 != "_" })
                where above.contains(String(word)) {
                    found.append("Sources/OCTunnelCore/\(file):\(index + 1): \(word)")
                }
            }
        }
        return found
    }

    @Test(
        "System/ knows nothing above it: no type the core declares elsewhere is named there (its own errors, SocketFailure and TerminalFailure; a secret's storage by protocol) (issue 49)"
    )
    func systemKnowsNothingAbove() throws {
        let found = try Self.namesFromAbove(under: Self.root)
        #expect(found.isEmpty, "types from above System/ named in it:\n\(found.joined(separator: "\n"))")
        let tree = try Self.plantedTree("seam-above")
        try tree.write("Sources/OCTunnelCore/Engine/Loop.swift", "enum LoopWake { case stop }\nstruct Engine {}\n")
        try tree.write(
            "Sources/OCTunnelCore/System/Calls.swift",
            "// an Engine in a comment\nlet text = \"LoopWake in a string\"\nfunc wake() -> LoopWake { .stop }\n")
        #expect(try Self.namesFromAbove(under: tree.path) == ["Sources/OCTunnelCore/System/Calls.swift:3: LoopWake"])
    }
}
