import Foundation

/// The variables that steer a sanitizer-built process (scripts/sanitize.sh sets them): where
/// reports go, whether a report ends the run, and swift-backtrace's switch.
public let sanitizerVariables = ["TSAN_OPTIONS", "ASAN_OPTIONS", "UBSAN_OPTIONS", "LSAN_OPTIONS", "SWIFT_BACKTRACE"]

/// `environment` with the sanitizer variables of `parent` (this test process's, by default)
/// added where `environment` does not set them. Tests give octunnel a minimal environment of
/// their own; under scripts/sanitize.sh the built octunnel is a sanitizer build too, and its
/// reports must land in the script's log directory, not on a stderr a test reads and drops.
public func addingSanitizerSettings(
    to environment: [String: String],
    from parent: [String: String] = ProcessInfo.processInfo.environment
) -> [String: String] {
    var result = environment
    for name in sanitizerVariables where result[name] == nil {
        if let value = parent[name] { result[name] = value }
    }
    return result
}

/// Whether the `octunnel` under test carries AddressSanitizer (scripts/sanitize.sh builds it so).
/// ASan holds freed memory back (256 MB by default), pads every allocation and keeps shadow
/// memory, so such a child's peak RSS is largely ASan's own. Read from the binary, not from the
/// environment: a plain `swift test --sanitize=address` counts too.
public let octunnelHasAddressSanitizer = carriesAddressSanitizer(octunnelBinary)

/// Whether the executable at `path` holds AddressSanitizer's runtime, which names `__asan_init`.
/// The name is put together at run time: as one literal it would sit in the test runner, which
/// links this code, whatever the runner was built with.
public func carriesAddressSanitizer(_ path: String) -> Bool {
    guard let bytes = FileManager.default.contents(atPath: path) else { return false }
    return bytes.range(of: Data("__asan".utf8) + Data("_init".utf8)) != nil
}

/// How many times a bound on an `octunnel` child's peak RSS is multiplied when that child carries
/// AddressSanitizer: its documented typical memory cost is about 3x. Runaway growth still fails.
public var peakMemoryAllowance: Int { octunnelHasAddressSanitizer ? 3 : 1 }
