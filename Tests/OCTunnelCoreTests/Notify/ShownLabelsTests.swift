import Foundation
@testable import OCTunnelCore
import Testing

/// A question's labels as its notification's buttons show them (issue 55, finding 6): what cannot be
/// seen is dropped, forms are compared as displayed, colliding cut forms show their ends, and labels
/// that cannot be told apart get no buttons at all.
@Suite(
    "labels as shown: invisible characters dropped, compared as displayed, collisions named or no buttons", .ownThreads)
struct ShownLabelsTests {
    static func question(_ labels: [String]) -> AgentMoment {
        QuestionNotificationAnswerTests.moment(labels)
    }

    @Test("plain labels show as they are; spaces collapse and trim; short labels are not cut")
    func plain() {
        #expect(ShownLabels.forms(["Postgres", "SQLite"]) == ["Postgres", "SQLite"])
        #expect(ShownLabels.forms(["  two \u{00a0} words\u{2029}", "x"]) == ["two words", "x"])
        #expect(ShownLabels.forms([String(repeating: "a", count: 40)]) == [String(repeating: "a", count: 40)])
    }

    @Test("format and default-ignorable characters are dropped, so labels that differ only in them get no buttons")
    func invisible() {
        let invisibles: [Unicode.Scalar] = [
            "\u{2060}", "\u{200b}", "\u{200d}", "\u{202e}", "\u{2066}", "\u{feff}", "\u{00ad}",
            "\u{034f}", "\u{fe0f}", "\u{180e}", "\u{3164}", "\u{e0001}", "\u{1d173}",
        ]
        for invisible in invisibles {
            let sneaky = "Yes" + String(invisible)
            #expect(ShownLabels.forms(["Yes", sneaky]) == nil, "U+\(String(invisible.value, radix: 16))")
            #expect(ShownLabels.forms(["No", sneaky]) == ["No", "Yes"], "U+\(String(invisible.value, radix: 16))")
            #expect(
                !QuestionNotificationAnswer.answerable(Self.question(["Yes", sneaky])),
                "U+\(String(invisible.value, radix: 16))")
        }
        // A label of nothing visible shows nothing: no button for it, nor for the others.
        #expect(ShownLabels.forms(["Yes", "\u{2060}\u{200b}"]) == nil)
        #expect(ShownLabels.forms(["Yes", "   "]) == nil)
    }

    @Test(
        "compared as displayed: canonically equivalent text, another space, and an escape that looks like a control character collide"
    )
    func asDisplayed() {
        #expect(ShownLabels.forms(["caf\u{e9}", "cafe\u{301}"]) == nil)
        #expect(ShownLabels.forms(["a b", "a\u{00a0}b"]) == nil)
        #expect(ShownLabels.forms(["a  b", "a b"]) == nil)
        #expect(ShownLabels.forms(["a\u{1b}", "a\\x1b"]) == nil)
        #expect(ShownLabels.forms(["a\u{1b}", "a"]) == ["a\\x1b", "a"])
    }

    @Test("labels alike in their first 40 characters show start and end; alike in start and end too, no buttons")
    func cut() throws {
        let head = "Use the production database at db-primary"
        let forms = try #require(ShownLabels.forms([head + " (read only)", head + " (read write)"]))
        #expect(forms[0] != forms[1])
        #expect(forms.allSatisfy { $0.unicodeScalars.count <= ShownLabels.limit })
        #expect(forms[0].hasSuffix("(read only)") && forms[1].hasSuffix("(read write)"))
        #expect(forms[0].hasPrefix("Use the production"))
        // Distinct cut forms are shown cut, with the usual mark.
        #expect(ShownLabels.forms([head + " A", "B"])?[0] == String(head.prefix(40)) + "…")
        // Alike at both ends, different in the middle: nothing shown could tell them apart.
        let middle = { (word: String) in String(repeating: "x", count: 45) + word + String(repeating: "y", count: 45) }
        #expect(ShownLabels.forms([middle("one"), middle("two")]) == nil)
        #expect(!QuestionNotificationAnswer.answerable(Self.question([middle("one"), middle("two")])))
        // A label that ends in the cut mark does not pose as another label's cut form.
        let posing = try #require(
            ShownLabels.forms([String(repeating: "z", count: 50), String(repeating: "z", count: 40) + "…"]))
        #expect(posing[0] != posing[1])
    }

    @Test("the buttons carry the shown forms, the click sends the label stored; no forms, no option buttons")
    func arguments() {
        let question = Self.question(["Ship\u{2060} it", "Wait"]).question!
        #expect(
            QuestionNotificationAnswer.arguments(question, secrets: []).prefix(2) == [
                "--action=q0=Ship it", "--action=q1=Wait",
            ])
        #expect(QuestionNotificationAnswer.chosen("q0", question) == .answer("Ship\u{2060} it"))
        let alike = AskedQuestion(
            id: "que_1", sessionID: "ses_1", count: 1, multiple: false, labels: ["Yes", "Yes\u{2060}"])
        #expect(
            QuestionNotificationAnswer.arguments(alike, secrets: []) == [
                "--action=dismiss=Dismiss", "--expire-time=120000",
            ])
    }

    @Test("a secret split by an invisible character is redacted once it shows whole; a secret never reaches a form")
    func secrets() throws {
        let secret = "hunter2-secret"
        let forms = try #require(ShownLabels.forms(["use hunter2\u{2060}-secret", "b"], secrets: [secret]))
        #expect(forms == ["use ***", "b"])
        #expect(ShownLabels.forms(["\(secret) one", "\(secret) two"], secrets: [secret]) == ["*** one", "*** two"])
        #expect(ShownLabels.forms([secret, "***"], secrets: [secret]) == nil)
    }
}
