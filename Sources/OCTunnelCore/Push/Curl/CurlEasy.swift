import CCurl
import Foundation

/// libcurl, started once per process (`curl_global_init`, which is not thread-safe: a `static
/// let` runs it exactly once, whichever thread asks first).
enum CurlGlobal {
    static let started: Bool = curl_global_init(Int(CURL_GLOBAL_DEFAULT)) == CURLE_OK
}

/// Where a transfer's bytes go: kept whole up to `limit` (a request's answer), or cut into lines
/// for `onLine` (a stream). Passed to libcurl's write callback as its `CURLOPT_WRITEDATA`.
final class CurlSink {
    let limit: Int
    let onLine: ((String) -> Bool)?
    var bytes: [UInt8] = []
    /// Set when the answer (or one line) passed `limit`, or `onLine` asked to stop.
    var overflowed = false
    var stopped = false
    /// When the last byte came (a stream's silence watch), from `MonotonicClock`.
    var lastByte = MonotonicClock.now()

    init(limit: Int, onLine: ((String) -> Bool)? = nil) { (self.limit, self.onLine) = (limit, onLine) }

    /// Takes `count` bytes; false stops the transfer.
    func take(_ pointer: UnsafeRawBufferPointer) -> Bool {
        lastByte = MonotonicClock.now()
        guard let onLine else {
            guard bytes.count + pointer.count <= limit else {
                overflowed = true
                return false
            }
            bytes.append(contentsOf: pointer)
            return true
        }
        for byte in pointer {
            if byte == 0x0A {
                let line = String(decoding: bytes, as: UTF8.self)
                bytes.removeAll(keepingCapacity: true)
                guard onLine(line) else {
                    stopped = true
                    return false
                }
            } else {
                guard bytes.count < limit else {
                    overflowed = true
                    return false
                }
                bytes.append(byte)
            }
        }
        return true
    }
}

/// libcurl's write callback: hands the bytes to the `CurlSink` in `context`.
private let curlWrite: octunnel_curl_write_callback = { data, size, count, context in
    guard let context else { return 0 }
    let sink = Unmanaged<CurlSink>.fromOpaque(context).takeUnretainedValue()
    let length = size * count
    guard length > 0, let data else { return length }
    return sink.take(UnsafeRawBufferPointer(start: data, count: length)) ? length : 0
}

/// One libcurl easy handle (`curl_easy_init`, freed by `curl_easy_cleanup`) with the header list,
/// error buffer and sink it points at, all kept alive as long as it is.
final class CurlEasy {
    let handle: UnsafeMutableRawPointer
    private var headers: UnsafeMutablePointer<curl_slist>?
    private let errorBuffer = UnsafeMutablePointer<CChar>.allocate(capacity: Int(CURL_ERROR_SIZE) + 1)
    let sink: CurlSink

    /// A handle for `request` (TLS verified against the system's CAs and `caFile`; only http and
    /// https, no redirect followed, no signal used), writing into `sink`.
    init(_ request: PushHTTPRequest, options: PushHTTPOptions, sink: CurlSink) throws(PushError) {
        guard CurlGlobal.started, let handle = curl_easy_init() else {
            throw .transport(url: request.url.shown, detail: "libcurl could not start")
        }
        self.handle = handle
        self.sink = sink
        errorBuffer.initialize(repeating: 0, count: Int(CURL_ERROR_SIZE) + 1)
        var failed = false
        func long(_ option: CURLoption, _ value: Int) {
            failed = failed || octunnel_curl_setopt_long(handle, option, value) != CURLE_OK
        }
        func text(_ option: CURLoption, _ value: String) {
            failed = failed || octunnel_curl_setopt_string(handle, option, value) != CURLE_OK
        }
        text(CURLOPT_URL, request.url.text + request.suffix)
        text(CURLOPT_PROTOCOLS_STR, "http,https")
        long(CURLOPT_FOLLOWLOCATION, 0)
        long(CURLOPT_NOSIGNAL, 1)
        long(CURLOPT_SSL_VERIFYPEER, 1)
        long(CURLOPT_SSL_VERIFYHOST, 2)
        long(CURLOPT_CONNECTTIMEOUT_MS, Int(options.connectTimeout * 1000))
        if !request.streaming { long(CURLOPT_TIMEOUT_MS, Int(options.timeout * 1000)) }
        // The system's CAs stay trusted beside the file's (OpenSSL reads both).
        if let caFile = options.caFile {
            text(CURLOPT_CAINFO, caFile)
            text(CURLOPT_CAPATH, "/etc/ssl/certs")
        }
        text(CURLOPT_CUSTOMREQUEST, request.method)
        if let body = request.body {
            long(CURLOPT_POSTFIELDSIZE, body.count)
            failed =
                failed
                || body.withUnsafeBytes {
                    octunnel_curl_setopt_pointer(
                        handle, CURLOPT_COPYPOSTFIELDS,
                        UnsafeMutableRawPointer(mutating: $0.baseAddress ?? UnsafeRawPointer(bitPattern: 1)!))
                } != CURLE_OK
        }
        for (name, value) in request.headers { headers = curl_slist_append(headers, "\(name): \(value)") }
        // libcurl would add `Expect: 100-continue` to a larger POST and wait for it.
        headers = curl_slist_append(headers, "Expect:")
        failed = failed || octunnel_curl_setopt_slist(handle, CURLOPT_HTTPHEADER, headers) != CURLE_OK
        failed = failed || octunnel_curl_setopt_pointer(handle, CURLOPT_ERRORBUFFER, errorBuffer) != CURLE_OK
        failed = failed || octunnel_curl_setopt_write(handle, CURLOPT_WRITEFUNCTION, curlWrite) != CURLE_OK
        failed =
            failed
            || octunnel_curl_setopt_pointer(handle, CURLOPT_WRITEDATA, Unmanaged.passUnretained(sink).toOpaque())
                != CURLE_OK
        if failed {
            throw .transport(
                url: request.url.shown, detail: "libcurl refused an option (\(Self.version) is older than 7.85?)")
        }
    }

    deinit {
        curl_easy_cleanup(handle)
        curl_slist_free_all(headers)
        errorBuffer.deallocate()
    }

    /// `curl_easy_perform`: the whole transfer, on this thread.
    func perform() -> CURLcode { curl_easy_perform(handle) }

    /// The HTTP status of the answer (`CURLINFO_RESPONSE_CODE`), 0 before one.
    var status: Int {
        var code = 0
        _ = octunnel_curl_getinfo_long(handle, CURLINFO_RESPONSE_CODE, &code)
        return code
    }

    /// What failed, in libcurl's words: its error buffer, else `curl_easy_strerror`.
    func failure(_ code: CURLcode, url: PushURL) -> PushError {
        let said = String(cString: errorBuffer)
        let detail = said.isEmpty ? String(cString: curl_easy_strerror(code)) : said
        switch code {
        case CURLE_PEER_FAILED_VERIFICATION, CURLE_SSL_CACERT_BADFILE, CURLE_SSL_CERTPROBLEM:
            return .certificateNotVerified(url: url.shown, detail: detail)
        case CURLE_OPERATION_TIMEDOUT:
            return .timedOut(url: url.shown)
        case CURLE_WRITE_ERROR where sink.overflowed:
            return .answerTooLarge(url: url.shown, limit: sink.limit)
        default:
            return .transport(url: url.shown, detail: detail)
        }
    }

    /// libcurl's version line, e.g. "libcurl/8.14.1 OpenSSL/3.5.1 …".
    static var version: String { String(cString: curl_version()) }
}
