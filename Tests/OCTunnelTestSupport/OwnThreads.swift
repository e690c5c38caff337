import Foundation
import Testing

/// Runs each test's body off Swift's cooperative pool, every piece of it on a thread of its own.
///
/// Swift Testing runs test bodies on the cooperative pool: one thread per core, two on the
/// machines CI and newcomers have. Most tests here block (they wait for sshd, octunnel or a
/// socket), and a blocking body holds a pool thread for its whole run. Every other test's body
/// then waits for a thread after its time limit's clock has started (Runner's `_runTestCase`
/// starts the time limit, then asks for a thread), and so does the wake-up of each test that
/// finished. Seen in a full run beside two busy loops and a build (load 15): tests that take seconds
/// "took" 392 s and failed their 2-minute limits, and in a quiet run nine tests "ended" within
/// 7 ms of each other at 154.64 s, when a thread came free. With every body on its own thread, the
/// pool only runs Swift Testing's own bookkeeping and the time limits' clocks, and a test's
/// time is its own work. How many tests run at once is `scripts/test.sh`'s choice
/// (SWT_EXPERIMENTAL_MAXIMUM_PARALLELIZATION_WIDTH); waiting for a place there starts no clock.
/// Every suite carries `.ownThreads` (HarnessTests checks it).
@available(macOS 15.0, *)
public struct OwnThreads: SuiteTrait, TestTrait, TestScoping {
    public var isRecursive: Bool { true }

    public func provideScope(
        for test: Test, testCase: Test.Case?,
        performing function: @Sendable () async throws -> Void
    ) async throws {
        guard testCase != nil else { return try await function() }
        try await withTaskExecutorPreference(ThreadPerJob.shared) { try await function() }
    }
}

@available(macOS 15.0, *)
extension Trait where Self == OwnThreads {
    /// Each test's body runs on threads of its own, not on the cooperative pool (`OwnThreads`).
    public static var ownThreads: Self { OwnThreads() }
}

/// A task executor that runs every job it is given on a new thread: a job that blocks holds
/// only its own thread. A job is a test's code between two suspensions (a whole synchronous
/// test is one job), so the threads alive at once are about the tests running at once.
@available(macOS 15.0, *)
public final class ThreadPerJob: TaskExecutor, @unchecked Sendable {
    public static let shared = ThreadPerJob()
    private static let mark = "octunnel.ThreadPerJob"

    /// Whether the calling code runs on one of this executor's threads.
    public static var isCurrent: Bool { Thread.current.threadDictionary[mark] != nil }

    public func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        let executor = asUnownedTaskExecutor()
        let thread = Thread {
            Thread.current.threadDictionary[Self.mark] = true
            job.runSynchronously(on: executor)
        }
        thread.stackSize = 8 << 20
        thread.start()
    }
}
