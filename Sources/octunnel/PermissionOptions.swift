import ArgumentParser
import OCTunnelCore

/// What every `permission` subcommand needs to reach OpenCode through the running tunnel.
struct PermissionOptions: ParsableArguments {
    @OptionGroup var directory: DirectoryOptions
    @OptionGroup var profile: ProfileOptions

    @Option(
        help: ArgumentHelp(
            "A file holding OpenCode's password. Default: the saved one, else $OPENCODE_PASSWORD, else $OPENCODE_SERVER_PASSWORD.",
            valueName: "PATH"))
    var passwordFile: String?

    @Option(
        name: .customLong("project"),
        help: ArgumentHelp(
            "A project directory on the home machine to ask about (repeatable; default: the one OpenCode was started in).",
            valueName: "DIR"))
    var projects: [String] = []

    func validate() throws {
        try refuseControlCharacters(passwordFile, option: "--password-file")
        for project in projects { try refuseControlCharacters(project, option: "--project") }
    }

    func client() throws -> PermissionClient {
        try TunnelOpenCode.permissionClient(
            directory: directory.resolved, profile: try profile.resolved,
            passwordFile: passwordFile.map(UserPath.absolute))
    }

    /// `permission allow|always|reject ID`: sends `reply` and says what it did.
    func answer(_ id: String, _ reply: PermissionReply) throws {
        try runReportingErrors {
            let request = try client().answer(id: id, reply: reply, directories: projects)
            Console.say("\(reply.done): \(request.asked) (\(request.id))")
        }
    }

    /// `permission answer|dismiss ID`: sends `reply` to a question and says what it did.
    func answer(question id: String, _ reply: QuestionReply) throws {
        try runReportingErrors {
            let request = try client().answerQuestion(id: id, reply: reply, directories: projects)
            Console.say("\(reply.done): question \(request.id)")
        }
    }
}
