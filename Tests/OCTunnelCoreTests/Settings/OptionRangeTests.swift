import OCTunnelCore
import OCTunnelTestSupport
import Testing

@Suite("the numeric options' ranges, decided in the core", .ownThreads)
struct OptionRangeTests {
    @Test("each range's ends pass, one past either end is refused with the option's one line")
    func rangesAndTheirSentences() {
        #expect(OptionRange.keepalive.problem(0) == "--keepalive must be 1-3600 seconds")
        #expect(OptionRange.connectTimeout.problem(3601) == "--connect-timeout must be 1-3600 seconds")
        #expect(OptionRange.healthTimeout.problem(601) == "--health-timeout must be 1-600 seconds")
        #expect(OptionRange.warm.problem(65) == "--warm must be 0-64 channels")
        for option in OptionRange.allCases {
            #expect(option.problem(option.range.lowerBound) == nil && option.problem(option.range.upperBound) == nil)
            #expect(
                option.problem(option.range.lowerBound - 1) != nil && option.problem(option.range.upperBound + 1) != nil
            )
        }
    }
}
