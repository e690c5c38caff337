import Foundation
@testable import OCTunnelCore
import OCTunnelTestSupport
import Testing

/// `authorize --account`'s pieces that need no VPS: the account names taken, the drop-in's text
/// and place, the advice without root, the program's shape and its report read back.
@Suite("authorize --account: names, the drop-in, the program and its report", .ownThreads)
struct AccountScriptTests {
    @Test(
        "account names: a lowercase letter or _, then letters, digits, _ or -, at most 32; nothing a shell or sshd_config would read otherwise"
    )
    func names() {
        for good in ["octunnel", "_oc", "oc-1_x", String(repeating: "a", count: 32)] {
            #expect(AccountDropIn.problem(good) == nil, "\(good)")
        }
        for bad in [
            "", "Octunnel", "1oc", "-oc", "oc tunnel", "oc;rm", "oc'x", "oc\nx", "öc", "oc*",
            String(repeating: "a", count: 33), "root,x",
        ] {
            #expect(AccountDropIn.problem(bad) != nil, "\(bad)")
            #expect(AccountDropIn(account: bad) == nil, "\(bad)")
        }
    }

    @Test("the drop-in: a Match User block with the five settings, beside sshd_config in sshd_config.d")
    func dropIn() throws {
        let dropIn = try #require(AccountDropIn(account: "octunnel"))
        #expect(dropIn.fileName == "octunnel-octunnel.conf")
        #expect(
            dropIn.lines == [
                "Match User octunnel", "    AllowStreamLocalForwarding no", "    AllowAgentForwarding no",
                "    X11Forwarding no",
                "    PermitTTY no", "    PermitUserRC no",
            ])
        #expect(dropIn.text.hasSuffix(dropIn.lines.joined(separator: "\n") + "\n"))
        #expect(
            dropIn.text.split(separator: "\n").filter { !$0.hasPrefix("#") && !$0.hasPrefix(" ") } == [
                "Match User octunnel"
            ])
        #expect(AccountDropIn.directory(forConfig: "/etc/ssh/sshd_config") == "/etc/ssh/sshd_config.d")
        #expect(
            AccountDropIn.advice(user: "me").contains(
                "Match User me / AllowStreamLocalForwarding no / AllowAgentForwarding no"))
    }

    @Test(
        "the program parses under dash, bash and busybox sh; its values are quoted; the install ends its here-document")
    func program() throws {
        let dropIn = try #require(AccountDropIn(account: "octunnel"))
        let install = AuthorizedKeysScript.install(
            line: "ssh-ed25519 \(String(repeating: "A", count: 68)) me", file: ".ssh/authorized_keys")
        let program = AccountScript.program(
            dropIn, config: "/etc/ssh/sshd config", sshd: "/usr/sbin/sshd", install: install)
        #expect(program.contains("C='/etc/ssh/sshd config'"))
        #expect(program.contains("\n" + install + AccountScript.marker + "\n"))
        let file = try TempDirectory("octunnel-account-script")
        try file.write("program.sh", program)
        var shells = ["/bin/dash", "/bin/bash"].filter { FileManager.default.isExecutableFile(atPath: $0) }.map {
            [$0, "-n"]
        }
        if FileManager.default.isExecutableFile(atPath: "/bin/busybox") { shells.append(["/bin/busybox", "sh", "-n"]) }
        #expect(!shells.isEmpty)
        for shell in shells {
            let result = try OCTunnelTestSupport.run(shell[0], Array(shell.dropFirst()) + [file.file("program.sh")])
            #expect(result.status == 0, "\(shell): \(result)")
        }
    }

    @Test(
        "the report: ready with how sshd was told; a refusal with its reason and sshd's words shown safe; anything else is no report"
    )
    func report() {
        let ready = AccountScript.Report.parse(
            "octunnel-account v=1 result=ready made=yes dropin=new reload=pid\noctunnel-keys v=1 result=added\n")
        #expect(
            ready
                == AccountScript.Report(
                    result: .ready, reason: nil, made: true, dropIn: "new", reload: "pid", said: nil))
        let refused = AccountScript.Report.parse(
            "octunnel-account-said line 3: Bad \u{1b}[31m option\noctunnel-account v=1 result=refused reason=sshdt\n")
        #expect(refused?.result == .refused && refused?.reason == "sshdt")
        #expect(refused?.said == "line 3: Bad \\x1b[31m option")
        #expect(AccountScript.Report.parse("octunnel-account v=2 result=ready") == nil)
        #expect(AccountScript.Report.parse("octunnel-account v=1 result=maybe") == nil)
        #expect(AccountScript.Report.parse("") == nil)
        // sshd's complaints end in CRLF.
        let crlf = AccountScript.Report.parse(
            "octunnel-account-said line 16: Bad option\r\noctunnel-account v=1 result=refused reason=sshdt\r\n")
        #expect(crlf?.reason == "sshdt" && crlf?.said == "line 16: Bad option")
    }
}
