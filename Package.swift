// swift-tools-version:6.0
import PackageDescription

/// A C library found with pkg-config (its `module.modulemap` and `shim.h` in Sources/NAME), and
/// the Debian package that provides it.
func cLibrary(_ name: String, pkgConfig: String, debianPackage: String) -> Target {
    .systemLibrary(name: name, pkgConfig: pkgConfig, providers: [.apt([debianPackage])])
}

let package = Package(
    name: "octunnel",
    platforms: [.macOS(.v13)],
    products: [
        .executable(name: "octunnel", targets: ["octunnel"]),
        .library(name: "OCTunnelCore", targets: ["OCTunnelCore"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2")
    ],
    targets: [
        cLibrary("CLibSSH2", pkgConfig: "libssh2", debianPackage: "libssh2-1-dev"),
        cLibrary("COpenSSL", pkgConfig: "openssl", debianPackage: "libssl-dev"),
        // Push/: HTTPS to an ntfy server (Debian's libcurl, its OpenSSL build) and the subscribe
        // address as a QR code in the terminal (libqrencode).
        cLibrary("CCurl", pkgConfig: "libcurl", debianPackage: "libcurl4-openssl-dev"),
        cLibrary("CQRencode", pkgConfig: "libqrencode", debianPackage: "libqrencode-dev"),
        // The C library of each platform, imported in one file each (Linux.swift, Darwin.swift),
        // with what differs between them (the calls alike on both in Platform.swift): octunnel's
        // System/ layer is written once above it.
        .target(name: "OCTunnelLibc"),
        .target(
            name: "OCTunnelCore",
            dependencies: ["OCTunnelLibc", "CLibSSH2", "COpenSSL", "CCurl", "CQRencode"],
            plugins: ["VersionStamp"]
        ),
        // The build's version (scripts/version.sh): the release, or the release and the commit.
        .plugin(name: "VersionStamp", capability: .buildTool(), path: "Sources/VersionStamp"),
        .executableTarget(
            name: "octunnel",
            dependencies: [
                "OCTunnelCore",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ]
        ),
        .target(
            name: "OCTunnelTestSupport",
            path: "Tests/OCTunnelTestSupport"
        ),
        .testTarget(
            name: "OCTunnelCoreTests",
            dependencies: ["OCTunnelCore", "OCTunnelTestSupport"]
        ),
        .testTarget(
            name: "octunnelTests",
            dependencies: ["OCTunnelCore", "OCTunnelTestSupport", "octunnel"]
        ),
    ]
)
