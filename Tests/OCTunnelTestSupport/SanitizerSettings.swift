import Foundation

/// The variables that steer a sanitizer-built process (scripts/sanitize.sh sets them): where
/// reports go, whether a report ends the run, and swift-backtrace's switch.
public let sanitizerVariables = ["TSAN_OPTIONS", "ASAN_OPTIONS", "UBSAN_OPTIONS", "LSAN_OPTIONS", "SWIFT_BACKTRACE"]

/// `environment` with the sanitizer variables of `parent` (this test process's, by default)
/// added where `environment` does not set them. Tests give octunnel a minimal environment of
/// their own; under scripts/sanitize.sh the built octunnel is a sanitizer build too, and its
/// reports must land in the script's log directory, not on a stderr a test reads and drops.
public func addingSanitizerSettings(to environment: [String: String],
                                    from parent: [String: String] = ProcessInfo.processInfo.environment) -> [String: String] {
    var result = environment
    for name in sanitizerVariables where result[name] == nil {
        if let value = parent[name] { result[name] = value }
    }
    return result
}
