import Foundation

/// How long the tests that wait on real time wait (issue 49): each such test names its field
/// length (what users meet: a one-minute outage, a three-minute event stream) and the short one
/// CI runs. CI runs the short ones; `OCTUNNEL_LONG_TESTS=1` runs the field's lengths
/// (`scripts/soak.sh --long-tests` does, for the suites that wait), so the long runs stay one
/// command away without holding every CI run for minutes.
public enum TestLengths {
    /// Whether the field's lengths were asked for.
    public static var long: Bool { ProcessInfo.processInfo.environment["OCTUNNEL_LONG_TESTS"] == "1" }

    /// `field` seconds when the long lengths were asked for, else `short`.
    public static func seconds(field: Double, short: Double) -> Double { long ? field : short }
}
