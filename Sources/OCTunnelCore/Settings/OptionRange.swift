/// The ranges octunnel's numeric options take, and the sentence that refuses a value outside
/// one (exit 64): decided here, so the executable only maps flags (issue 49).
public enum OptionRange: CaseIterable, Sendable {
    case keepalive, connectTimeout, healthTimeout, warm

    /// The values allowed.
    public var range: ClosedRange<Int> {
        switch self {
        case .keepalive, .connectTimeout: return 1...3600
        case .healthTimeout: return 1...600
        case .warm: return 0...64
        }
    }

    /// The flag that takes it.
    public var flag: String {
        switch self {
        case .keepalive: return "--keepalive"
        case .connectTimeout: return "--connect-timeout"
        case .healthTimeout: return "--health-timeout"
        case .warm: return "--warm"
        }
    }

    private var unit: String { self == .warm ? "channels" : "seconds" }

    /// nil when `value` is allowed, else the one line that refuses it ("--keepalive must be
    /// 1-3600 seconds").
    public func problem(_ value: Int) -> String? {
        range.contains(value) ? nil : "\(flag) must be \(range.lowerBound)-\(range.upperBound) \(unit)"
    }
}
