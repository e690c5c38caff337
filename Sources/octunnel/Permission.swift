import ArgumentParser
import OCTunnelCore

/// `permission list`, `permission allow|always|reject ID` and, for a question,
/// `permission answer ID LABEL|dismiss ID`: what OpenCode waits on, answered through the running
/// `tunnel up` of this profile (exit 3 if none runs).
struct PermissionCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "permission",
        abstract: "List the permissions OpenCode waits on and answer one, through the running tunnel.",
        subcommands: [List.self, Reply<Allow>.self, Reply<Always>.self, Reply<Reject>.self, Answer.self, Dismiss.self]
    )
}

extension PermissionCommand {
    struct List: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract:
                "Show what OpenCode waits for an answer to: id, how long ago, what is asked, session, directory; then its questions."
        )

        @OptionGroup var options: PermissionOptions

        @Flag(
            help: ArgumentHelp(
                "Print one JSON object on stdout (openCode, " + "permissions: id, sessionID, sessionTitle, "
                    + "permission, patterns, directory, askedAt, secondsAgo; more; questions; moreQuestions)."))
        var json = false

        func run() throws {
            try runReportingErrors {
                let (generation, list) = try options.client().list(directories: options.projects)
                if json { return Console.data(list.jsonText(generation: generation)) }
                if list.items.isEmpty && list.questions.isEmpty { Console.say("nothing waits for an answer") }
                list.humanLines().forEach(Console.data)
            }
        }
    }

    /// `permission allow|always|reject ID`: `Kind`'s reply to one pending permission.
    struct Reply<Kind: ReplyKind>: ParsableCommand {
        static var configuration: CommandConfiguration {
            switch Kind.reply {
            case .once:
                CommandConfiguration(
                    commandName: "allow", abstract: "Allow a pending permission once (exit 4 if it no longer waits).")
            case .always:
                CommandConfiguration(
                    commandName: "always",
                    abstract:
                        "Allow a pending permission and the same ones after it in this session (exit 4 if it no longer waits)."
                )
            case .reject:
                CommandConfiguration(
                    commandName: "reject", abstract: "Reject a pending permission (exit 4 if it no longer waits).")
            }
        }
        @OptionGroup var options: PermissionOptions
        @Argument(help: "The permission's id, as `permission list` shows it.") var id: String
        func run() throws { try options.answer(id, Kind.reply) }
    }

    /// Which reply a `Reply` command sends.
    protocol ReplyKind { static var reply: PermissionReply { get } }
    enum Allow: ReplyKind { static let reply = PermissionReply.once }
    enum Always: ReplyKind { static let reply = PermissionReply.always }
    enum Reject: ReplyKind { static let reply = PermissionReply.reject }

    struct Answer: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Answer a pending question with one of its options (exit 4 if it no longer waits).")
        @OptionGroup var options: PermissionOptions
        @Argument(help: "The question's id, as `permission list` shows it.") var id: String
        @Argument(help: "The option's label, exactly as `permission list` shows it between [ ].") var label: String
        func run() throws { try options.answer(question: id, .answer(label)) }
    }

    struct Dismiss: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract:
                "Dismiss a pending question: the agent is told you declined to answer (exit 4 if it no longer waits).")
        @OptionGroup var options: PermissionOptions
        @Argument(help: "The question's id, as `permission list` shows it.") var id: String
        func run() throws { try options.answer(question: id, .dismiss) }
    }
}
