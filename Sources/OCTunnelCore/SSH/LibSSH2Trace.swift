import CLibSSH2
import Foundation

/// libssh2's own trace (`libssh2_trace`), written to the file `OCTUNNEL_LIBSSH2_TRACE` names,
/// for finding a hang inside libssh2. Debian's libssh2 is built without debug, so the trace
/// says nothing there; run octunnel with `LD_LIBRARY_PATH` pointing at a libssh2 built with
/// `LIBSSH2DEBUG` (docs/architecture.md, "Tracing libssh2").
enum LibSSH2Trace {
    /// The trace file, opened once for every session of the process (the lazy initialisation is
    /// thread-safe) and never closed; nil when off.
    nonisolated(unsafe) private static let file: OwnedDescriptor? = {
        guard let path = ProcessInfo.processInfo.environment["OCTUNNEL_LIBSSH2_TRACE"], !path.isEmpty else {
            return nil
        }
        return OwnedDescriptor.openForAppending(path, mode: 0o600)
    }()

    /// Connection, key exchange and error messages; `OCTUNNEL_LIBSSH2_TRACE_MASK` overrides
    /// (libssh2.h's `LIBSSH2_TRACE_*` bits; `LIBSSH2_TRACE_TRANS` dumps every packet in clear).
    private static let mask: Int32 = {
        if let text = ProcessInfo.processInfo.environment["OCTUNNEL_LIBSSH2_TRACE_MASK"], let value = Int32(text) {
            return value
        }
        return LIBSSH2_TRACE_CONN | LIBSSH2_TRACE_KEX | LIBSSH2_TRACE_ERROR
    }()

    /// Turns the trace on for `session` when the environment asks for it (`libssh2_trace`,
    /// `libssh2_trace_sethandler`).
    static func enable(on session: OpaquePointer) {
        guard file != nil else { return }
        let handler: @convention(c) (OpaquePointer?, UnsafeMutableRawPointer?, UnsafePointer<CChar>?, Int) -> Void = {
            _, _, text, length in
            guard let text else { return }
            LibSSH2Trace.file?.write(text, length)
            LibSSH2Trace.file?.write("\n", 1)
        }
        _ = libssh2_trace_sethandler(session, nil, handler)
        _ = libssh2_trace(session, mask)
    }
}
