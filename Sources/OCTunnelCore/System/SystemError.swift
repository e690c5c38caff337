#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// An errno from a named system call, kept with the path or detail it concerned.
public struct SystemError: Error, CustomStringConvertible, Sendable {
    public let call: String
    public let code: Int32
    public let detail: String?
    /// Said instead of `strerror(code)`, when the errno alone would mislead ("not a regular file").
    public let reason: String?

    public init(_ call: String, code: Int32 = errno, detail: String? = nil, reason: String? = nil) {
        self.call = call
        self.code = code
        self.detail = detail
        self.reason = reason
    }

    public var description: String {
        let reason = self.reason ?? String(cString: strerror(code))
        if let detail { return "\(call) \(detail): \(reason)" }
        return "\(call): \(reason)"
    }
}

/// Runs a system call, retrying on EINTR, and throws `SystemError` on -1.
@discardableResult
func retryingEINTR<T: BinaryInteger>(_ call: String, detail: String? = nil, _ body: () -> T) throws(SystemError) -> T {
    let result = Syscall.retryingEINTR(body)
    if result == -1 { throw SystemError(call, detail: detail) }
    return result
}
