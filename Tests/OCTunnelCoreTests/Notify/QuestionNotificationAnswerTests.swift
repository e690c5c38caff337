import Foundation
@testable import OCTunnelCore
import OCTunnelTestSupport
import Testing

/// Answering a question from its desktop notification (issue 48): which questions get actions,
/// what `notify-send` is given, how a printed action maps back to the label octunnel stored, what
/// a hostile label can and cannot do, and the routes and bodies each OpenCode takes.
@Suite("answer a question from the notification: which, arguments, the label chosen, routes", .ownThreads)
struct QuestionNotificationAnswerTests {
    static func options(_ labels: [String]) -> [[String: Any]] {
        labels.map { ["label": $0, "description": "why \($0)"] }
    }

    static func fields(
        _ labels: [String], id: String = "que_1", multiple: Bool? = nil, questions extra: Int = 0
    ) -> [String: Any] {
        var first: [String: Any] = ["question": "Which database?", "header": "DB", "options": options(labels)]
        if let multiple { first["multiple"] = multiple }
        let others = (0..<extra).map { _ in
            ["question": "And?", "header": "", "options": options(["x"])] as [String: Any]
        }
        return ["id": id, "sessionID": "ses_1", "questions": [first] + others]
    }

    static func moment(_ labels: [String], id: String = "que_1") -> AgentMoment {
        var moment = AgentMoment(
            kind: .permission, sessionID: "ses_1", title: "Fix login", directory: "/home/me/shop",
            detail: "Which database?")
        moment.question = AskedQuestion(fields: fields(labels, id: id))
        return moment
    }

    @Test(
        "one single-choice question with one to three distinct options offers actions; several questions, multiple choice, none, four or more, a repeated, empty or overlong label do not"
    )
    func whichOffer() throws {
        #expect(try #require(AskedQuestion(fields: Self.fields(["Postgres", "SQLite"]))).offersActions)
        #expect(try #require(AskedQuestion(fields: Self.fields(["Yes"]))).offersActions)
        #expect(try #require(AskedQuestion(fields: Self.fields(["a", "b", "c"]))).offersActions)
        #expect(try #require(AskedQuestion(fields: Self.fields(["a", "b"], multiple: false))).offersActions)
        #expect(try #require(AskedQuestion(fields: Self.fields(["a", "b"], multiple: true))).offersActions == false)
        #expect(try #require(AskedQuestion(fields: Self.fields(["a", "b"], questions: 1))).offersActions == false)
        #expect(try #require(AskedQuestion(fields: Self.fields([]))).offersActions == false)
        #expect(try #require(AskedQuestion(fields: Self.fields(["a", "b", "c", "d"]))).offersActions == false)
        #expect(try #require(AskedQuestion(fields: Self.fields(["a", "a"]))).offersActions == false)
        #expect(try #require(AskedQuestion(fields: Self.fields(["a", ""]))).offersActions == false)
        #expect(
            try #require(AskedQuestion(fields: Self.fields(["a", String(repeating: "x", count: 201)]))).offersActions
                == false)
        // Not OpenCode's shapes: no request, or one whose id cannot go into a route.
        #expect(AskedQuestion(fields: ["sessionID": "ses_1"]) == nil)
        #expect(AskedQuestion(fields: Self.fields(["a"], id: "../x")) == nil)
        #expect(
            AskedQuestion(fields: ["id": "que_1", "sessionID": "ses_1", "questions": "nope"])?.offersActions == false)
        #expect(
            AskedQuestion(fields: ["id": "que_1", "sessionID": "ses_1", "questions": [["options": [["label": 3]]]]])?
                .offersActions == false)
    }

    @Test("only a question told alone gets actions: a merged +N more, a permission and a finished moment do not")
    func answerable() {
        #expect(QuestionNotificationAnswer.answerable(Self.moment(["Postgres", "SQLite"])))
        var merged = Self.moment(["Postgres", "SQLite"])
        merged.merged = AgentMoment.Merged(count: 2, otherSessions: 0)
        #expect(!QuestionNotificationAnswer.answerable(merged))
        #expect(
            !QuestionNotificationAnswer.answerable(
                AgentMoment(kind: .permission, sessionID: "s", title: nil, directory: nil, detail: nil)))
        #expect(!QuestionNotificationAnswer.answerable(Self.moment(["a", "b", "c", "d"])))
        // A question is not a permission: the permission's three actions never go on it.
        #expect(!NotificationAnswer.answerable(Self.moment(["Postgres", "SQLite"])))
    }

    @Test("the arguments: q0, q1, … name the options (never a label), dismiss last, the wait's expiry")
    func arguments() {
        let question = Self.moment(["Postgres", "SQLite"]).question!
        #expect(
            QuestionNotificationAnswer.arguments(question, secrets: []) == [
                "--action=q0=Postgres", "--action=q1=SQLite", "--action=dismiss=Dismiss",
                "--expire-time=120000",
            ])
    }

    #if os(Linux)
        @Test(
            "notify-send's whole command line for a question with actions: the options' actions before the summary and body"
        )
        func desktopCommand() throws {
            try requireTool(
                "/usr/bin/notify-send",
                "the desktop command is built only where notify-send is (apt install libnotify-bin)")
            let environment = ["DBUS_SESSION_BUS_ADDRESS": "unix:path=/nonexistent"]
            let command = try #require(
                DesktopChannel.command(Self.moment(["Postgres", "SQLite"]), environment: environment, actions: true))
            #expect(
                command.arguments == [
                    "--app-name=octunnel", "--urgency=critical", "--action=q0=Postgres", "--action=q1=SQLite",
                    "--action=dismiss=Dismiss", "--expire-time=120000", "--",
                    "OpenCode asks for permission: Fix login (shop)",
                    "Which database?",
                ])
        }
    #endif

    @Test(
        "a printed action maps back to the label octunnel stored for that index; anything else (a label, out of range, another shape, nothing) sends nothing"
    )
    func chosen() {
        let question = Self.moment(["Postgres", "SQLite"]).question!
        #expect(QuestionNotificationAnswer.chosen("q1\n", question) == .answer("SQLite"))
        #expect(QuestionNotificationAnswer.chosen("q0", question) == .answer("Postgres"))
        #expect(QuestionNotificationAnswer.chosen("dismiss\n", question) == .dismiss)
        for printed in ["", "\n", "q2", "q01", "q-1", "q+1", "q", "SQLite", "once", "reject", "q1 extra", "0"] {
            #expect(QuestionNotificationAnswer.chosen(printed, question) == nil, "\(printed)")
        }
    }

    @Test(
        "hostile labels: one that looks like an option stays inside its own --action argument; control, format and escape characters are shown as escapes; the label sent back is the one stored, as it came"
    )
    func hostileLabels() {
        let labels = ["--help", "-x\u{1b}[31mred", "a=b\u{202e}evil\nline"]
        let moment = Self.moment(labels)
        let question = moment.question!
        #expect(question.offersActions)
        let arguments = QuestionNotificationAnswer.arguments(question, secrets: [])
        #expect(arguments.count == 5)
        #expect(arguments[0] == "--action=q0=--help")
        #expect(arguments.prefix(3).enumerated().allSatisfy { $0.element.hasPrefix("--action=q\($0.offset)=") })
        for argument in arguments {
            #expect(
                !argument.unicodeScalars.contains { [.control, .format].contains($0.properties.generalCategory) },
                "\(argument)")
        }
        #expect(arguments[1] == "--action=q1=-x\\x1b[31mred")
        #expect(QuestionNotificationAnswer.chosen("q2", question) == .answer("a=b\u{202e}evil\nline"))
        // A long label is cut where it is shown; an option chosen still sends the label whole.
        let long = String(repeating: "é", count: 90)
        let cut = Self.moment(["short", long]).question!
        #expect(QuestionNotificationAnswer.arguments(cut, secrets: [])[1].hasSuffix("…"))
        #expect(QuestionNotificationAnswer.chosen("q1", cut) == .answer(long))
    }

    @Test(
        "a question whose id or a label holds the password gets no actions (its label is sent as it came or not at all); the password never reaches an argument"
    )
    func secretLabels() {
        let secret = "hunter2-secret"
        var moment = Self.moment(["Postgres", "use \(secret)"])
        #expect(moment.question != nil)
        moment = moment.redacted([secret])
        #expect(moment.question == nil)
        #expect(!QuestionNotificationAnswer.answerable(moment))
        #expect(Self.moment(["Postgres", "SQLite"]).redacted([secret]).question?.offersActions == true)
        // Shown with the secrets even where redaction upstream missed it.
        let question = AskedQuestion(
            id: "que_1", sessionID: "ses_1", count: 1, multiple: false, labels: ["a \(secret)", "b"])
        #expect(!QuestionNotificationAnswer.arguments(question, secrets: [secret]).joined().contains(secret))
    }

    @Test("question.asked (1.x) and question.v2.asked (2.x) are told with the request as OpenCode sent it")
    func toldWithTheRequest() throws {
        for type in ["question.asked", "question.v2.asked"] {
            var watch = AgentSessionWatch()
            let moments = watch.feed(OpenCodeEvent(type: type, fields: Self.fields(["Postgres", "SQLite"])), now: 0)
            let moment = try #require(moments.first, "\(type)")
            #expect(
                moment.question
                    == AskedQuestion(
                        id: "que_1", sessionID: "ses_1", count: 1, multiple: false, labels: ["Postgres", "SQLite"]))
            #expect(moment.detail == "Which database?")
            #expect(QuestionNotificationAnswer.answerable(moment))
        }
    }

    @Test(
        "the routes and bodies: 1.x /question/:id/reply|reject, 2.x /api/session/:sid/question/:id/reply|reject; {\"answers\":[[label]]} as JSON, none to dismiss"
    )
    func routes() throws {
        let question = AskedQuestion(
            id: "que_1", sessionID: "ses_1", count: 1, multiple: false, labels: ["SQLite", "say \"hi\"\\/"])
        #expect(QuestionReplyRoute.one.path(for: question, .answer("SQLite")) == "/question/que_1/reply")
        #expect(QuestionReplyRoute.one.path(for: question, .dismiss) == "/question/que_1/reject")
        #expect(
            QuestionReplyRoute.two.path(for: question, .answer("SQLite")) == "/api/session/ses_1/question/que_1/reply")
        #expect(QuestionReplyRoute.two.path(for: question, .dismiss) == "/api/session/ses_1/question/que_1/reject")
        #expect(
            String(decoding: QuestionReplyRoute.one.body(.answer("SQLite")), as: UTF8.self)
                == #"{"answers":[["SQLite"]]}"#)
        #expect(QuestionReplyRoute.two.body(.dismiss).isEmpty)
        let quoted = QuestionReplyRoute.two.body(.answer(question.labels[1]))
        let decoded = try #require(try JSONSerialization.jsonObject(with: Data(quoted)) as? [String: [[String]]])
        #expect(decoded == ["answers": [[question.labels[1]]]])
        #expect(QuestionReplyRoute(.one) == .one && QuestionReplyRoute(.two) == .two)
    }

    @Test(
        "what each OpenCode's answer means: 200 true or 204 taken; 2.x's QuestionNotFoundError gone; an empty 404 or 1.x's web app a missing route"
    )
    func judged() {
        let notFound = Array(
            #"{"_tag":"QuestionNotFoundError","requestID":"que_1","message":"Question request not found: que_1"}"#.utf8)
        #expect(
            QuestionReplyRoute.one.judge(status: 200, contentType: "application/json", body: Array("true".utf8))
                == .answered)
        #expect(QuestionReplyRoute.two.judge(status: 204, contentType: nil, body: []) == .answered)
        #expect(QuestionReplyRoute.two.judge(status: 404, contentType: "application/json", body: notFound) == .gone)
        #expect(QuestionReplyRoute.two.judge(status: 404, contentType: nil, body: []) == .routeMissing)
        #expect(
            QuestionReplyRoute.one.judge(status: 200, contentType: "text/html", body: Array("<!doctype html>".utf8))
                == .routeMissing)
        #expect(QuestionReplyRoute.two.judge(status: 401, contentType: nil, body: []) == .refused(generation: .two))
    }

    @Test("the pending list's entry for an id, either shape; none for an id not listed or a body of another shape")
    func listed() {
        let entry = Self.fields(["Postgres", "SQLite"])
        let one = try! JSONSerialization.data(withJSONObject: [entry])
        let two = try! JSONSerialization.data(withJSONObject: ["location": ["directory": "/x"], "data": [entry]])
        #expect(AskedQuestion.listed("que_1", in: Array(one), generation: .one)?.labels == ["Postgres", "SQLite"])
        #expect(AskedQuestion.listed("que_1", in: Array(two), generation: .two)?.sessionID == "ses_1")
        #expect(AskedQuestion.listed("que_2", in: Array(one), generation: .one) == nil)
        #expect(AskedQuestion.listed("que_1", in: Array(two), generation: .one) == nil)
        #expect(AskedQuestion.listed("que_1", in: Array("nope".utf8), generation: .one) == nil)
    }

    @Test(
        "the outcome's words: the line names the question, the label shown safe and the session; the follow-up's headline says it was not answered"
    )
    func words() {
        let moment = Self.moment(["Postgres", "SQLite"])
        #expect(
            QuestionNotificationAnswer.sentLine(.answer("SQLite\u{1b}"), moment)
                == "question que_1 answered \"SQLite\\x1b\" from the notification: Fix login (shop)")
        #expect(
            QuestionNotificationAnswer.sentLine(.dismiss, moment)
                == "question que_1 dismissed from the notification: Fix login (shop)")
        #expect(
            QuestionNotificationAnswer.failedHeadline(moment)
                == "OpenCode's question was not answered: Fix login (shop)")
    }
}
