import Foundation
import OCTunnelTestSupport
import Testing

@Suite("the test harness's child processes", .ownThreads)
struct RunningProcessTests {
    @Test(
        "a child still running is killed when the last reference to its RunningProcess goes (tests that forget to stop one do not leak it)"
    )
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

@Suite("the test harness's memory measure", .ownThreads)
struct PeakMemoryTests {
    /// Makes this test process large first (as a full suite run does), then measures a small
    /// child and one that grows to about 200 MB: each child's own peak, never this process's.
    @Test(
        "peakResidentKilobytes is the child's own peak: a small child stays small beside a large test process, a growing one is seen"
    )
    func childsOwnPeak() throws {
        let ballast = UnsafeMutableRawPointer.allocate(byteCount: 300 << 20, alignment: 4096)
        defer { ballast.deallocate() }
        memset(ballast, 1, 300 << 20)
        let small = try RunningProcess("/bin/sh", ["-c", "sleep 0.3"])
        #expect(small.waitForExit(timeout: 20) == 0)
        let smallPeak = try #require(small.peakResidentKilobytes)
        #expect(
            smallPeak < 50 * 1024,
            "a shell reported \(smallPeak / 1024) MB: the test process's own size leaked into the measure")
        let grower = try RunningProcess(
            "/usr/bin/python3", ["-c", "import time; b = bytearray(200 << 20); time.sleep(1)"])
        #expect(grower.waitForExit(timeout: 20) == 0)
        let grown = try #require(grower.peakResidentKilobytes)
        #expect(grown > 150 * 1024, "a child that held 200 MB reported \(grown / 1024) MB")
    }
}
