// swift-tools-version:5.4
// libFuzzer targets for octunnel's parsers. A package of its own so that the root package's
// `swift build` / `swift test` never see them; build and run them with `scripts/fuzz.sh`.
import PackageDescription

let core = Target.Dependency.product(name: "OCTunnelCore", package: "octunnel")

let package = Package(
    name: "octunnel-fuzz",
    dependencies: [
        .package(name: "octunnel", path: "../.."),
    ],
    targets: [
        .executableTarget(name: "FuzzPrivateKey", dependencies: [core]),
        .executableTarget(name: "FuzzKnownHosts", dependencies: [core]),
        .executableTarget(name: "FuzzTarget", dependencies: [core]),
    ]
)
