// swift-tools-version:5.4
// libFuzzer targets for octunnel's parsers. A package of its own so that the root package's
// `swift build` / `swift test` never see them; build and run them with `scripts/fuzz.sh`.
import PackageDescription

let core = Target.Dependency.product(name: "OCTunnelCore", package: "octunnel")
/// Each target: the core, and the few helpers every target's checks share.
let uses: [Target.Dependency] = [core, "FuzzSupport"]

let package = Package(
    name: "octunnel-fuzz",
    dependencies: [
        .package(name: "octunnel", path: "../..")
    ],
    targets: [
        .executableTarget(name: "FuzzPrivateKey", dependencies: [core]),
        .executableTarget(name: "FuzzKnownHosts", dependencies: [core]),
        .executableTarget(name: "FuzzTarget", dependencies: [core]),
        .executableTarget(name: "FuzzSSHConfig", dependencies: uses),
        .executableTarget(name: "FuzzEncryptedKey", dependencies: uses),
        .executableTarget(name: "FuzzPublicKey", dependencies: uses),
        .executableTarget(name: "FuzzHealthAnswer", dependencies: uses),
        .executableTarget(name: "FuzzEventStream", dependencies: uses),
        .executableTarget(name: "FuzzOpenCodeAnswer", dependencies: uses),
        .executableTarget(name: "FuzzSettings", dependencies: uses),
        .executableTarget(name: "FuzzStatusReply", dependencies: uses),
        .executableTarget(name: "FuzzSessionWatch", dependencies: uses),
        .executableTarget(name: "FuzzServiceFiles", dependencies: uses),
        .executableTarget(name: "FuzzForwardSpec", dependencies: uses),
        .executableTarget(name: "FuzzPermissionList", dependencies: uses),
        .executableTarget(name: "FuzzKeyLines", dependencies: uses),
        .executableTarget(name: "FuzzPushReply", dependencies: uses),
        .target(name: "FuzzSupport", dependencies: [core]),
    ]
)
