import CCurl
import Foundation

/// A transfer that runs until its server ends it or `stop()` is called from any thread: one easy
/// handle in its own multi handle (`curl_multi_poll`, woken by `curl_multi_wakeup`, which may be
/// called from another thread), so that stopping it never waits on the network.
final class CurlStream: @unchecked Sendable {
    private let multi: UnsafeMutableRawPointer
    private let stopped = Locked(false)

    init() throws(PushError) {
        guard CurlGlobal.started, let multi = curl_multi_init() else {
            throw .transport(url: "", detail: "libcurl could not start")
        }
        self.multi = multi
    }

    deinit { curl_multi_cleanup(multi) }

    /// Ends the transfer promptly: the thread in `run` returns within a poll.
    func stop() {
        stopped.value = true
        curl_multi_wakeup(multi)
    }

    var isStopped: Bool { stopped.value }

    /// Runs `easy` until it ends, `stop()` is called, or no byte came for `silence` seconds (a
    /// server that stopped its keepalives); returns nil when it ended by `stop()` or its sink.
    func run(_ easy: CurlEasy, url: PushURL, silence: Double) -> PushError? {
        curl_multi_add_handle(multi, easy.handle)
        defer { curl_multi_remove_handle(multi, easy.handle) }
        var running: Int32 = 1
        while running > 0 && !stopped.value {
            guard curl_multi_perform(multi, &running) == CURLM_OK else {
                return .transport(url: url.shown, detail: "libcurl's multi interface failed")
            }
            guard running > 0 else { break }
            if MonotonicClock.now() - easy.sink.lastByte > silence {
                return .silent(url: url.shown, seconds: Int(silence))
            }
            // At most one wake-up every 5 s of silence: keepalives, stop() and the data wake it sooner.
            _ = curl_multi_poll(multi, nil, 0, 5000, nil)
        }
        if stopped.value || easy.sink.stopped { return nil }
        var left: Int32 = 0
        while let message = curl_multi_info_read(multi, &left) {
            guard message.pointee.msg == CURLMSG_DONE else { continue }
            let code = message.pointee.data.result
            if code != CURLE_OK { return easy.failure(code, url: url) }
        }
        let status = easy.status
        return status == 200 ? .ended(url: url.shown) : .status(url: url.shown, status: status, body: "")
    }
}
