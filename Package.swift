// swift-tools-version:6.0
import PackageDescription

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
        .systemLibrary(
            name: "CLibSSH2",
            pkgConfig: "libssh2",
            providers: [.apt(["libssh2-1-dev"])]
        ),
        .systemLibrary(
            name: "COpenSSL",
            pkgConfig: "openssl",
            providers: [.apt(["libssl-dev"])]
        ),
        // Push/: HTTPS to an ntfy server (Debian's libcurl, its OpenSSL build) and the subscribe
        // address as a QR code in the terminal (libqrencode).
        .systemLibrary(
            name: "CCurl",
            pkgConfig: "libcurl",
            providers: [.apt(["libcurl4-openssl-dev"])]
        ),
        .systemLibrary(
            name: "CQRencode",
            pkgConfig: "libqrencode",
            providers: [.apt(["libqrencode-dev"])]
        ),
        // The C library of each platform, imported in one file each (Linux.swift, Darwin.swift),
        // with what differs between them: octunnel's System/ layer is written once above it.
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
