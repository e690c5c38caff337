import OCTunnelLibc

/// An errno from a named system call, kept with the path or detail it concerned.
public struct SystemError: Error, CustomStringConvertible, Sendable {
    public let call: String
    public let code: Int32
    public let detail: String?
    /// Said instead of `strerror(code)`, when the errno alone would mislead ("not a regular file").
    public let reason: String?

    /// `code`: the error number the call failed with (System/ reads it as `Errno.current`, right
    /// after the call).
    public init(_ call: String, code: Int32, detail: String? = nil, reason: String? = nil) {
        self.call = call
        self.code = code
        self.detail = detail
        self.reason = reason
    }

    public init(_ call: String, _ errno: Errno, detail: String? = nil, reason: String? = nil) {
        self.init(call, code: errno.rawValue, detail: detail, reason: reason)
    }

    /// The call's error number as a value.
    public var errno: Errno { Errno(rawValue: code) }

    /// `call` just failed: its error, `errno` read now (System/ only, right after the call).
    static func last(_ call: String, detail: String? = nil) -> SystemError {
        SystemError(call, .current, detail: detail)
    }

    public var description: String {
        let reason = self.reason ?? errno.description
        if let detail { return "\(call) \(detail): \(reason)" }
        return "\(call): \(reason)"
    }
}

/// Runs a system call, retrying on EINTR, and throws `SystemError` on -1.
@discardableResult
func retryingEINTR<T: BinaryInteger>(_ call: String, detail: String? = nil, _ body: () -> T) throws(SystemError) -> T {
    let result = Syscall.retryingEINTR(body)
    if result == -1 { throw SystemError.last(call, detail: detail) }
    return result
}
