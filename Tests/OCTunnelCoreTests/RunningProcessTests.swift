import Foundation
import OCTunnelTestSupport
import Testing

@Suite("the test harness's child processes")
struct RunningProcessTests {
    @Test("a child still running is killed when the last reference to its RunningProcess goes (tests that forget to stop one do not leak it)")
    func killedWhenDropped() throws {
        var child: RunningProcess? = try RunningProcess("/bin/sh", ["-c", "echo up; exec sleep 300"])
        let pid = try #require(child?.pid)
        #expect(child?.waitForLine(containing: "up", stdout: true, timeout: 10) != nil)
        #expect(kill(pid, 0) == 0)
        child = nil
        // deinit kills and reaps it at once, so the pid is gone now (no waiting).
        #expect(kill(pid, 0) == -1 && errno == ESRCH)
    }
}
