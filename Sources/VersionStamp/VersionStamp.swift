import Foundation
import PackagePlugin

/// Stamps octunnel's build with its Debian version (scripts/version.sh): the release number, or
/// the release and the commit, so that every build sorts after the one before and `apt install`
/// upgrades. A prebuild command, run at every build; the file changes only with the commit.
@main
struct VersionStamp: BuildToolPlugin {
    func createBuildCommands(context: PluginContext, target: Target) throws -> [Command] {
        let output = context.pluginWorkDirectoryURL.appendingPathComponent("generated")
        let script = context.package.directoryURL.appendingPathComponent("scripts/version.sh")
        return [
            .prebuildCommand(
                displayName: "octunnel's version (scripts/version.sh)",
                executable: URL(fileURLWithPath: "/bin/sh"),
                arguments: [script.path, "--swift", output.appendingPathComponent("OCTunnelBuild.swift").path],
                outputFilesDirectory: output)
        ]
    }
}
