import Foundation
@testable import OCTunnelCore
import OCTunnelTestSupport
import Testing

/// `UTCTimestamp`: the status JSON's dates without ICU, checked against Foundation's own
/// `ISO8601DateFormatter` (which the status code used before) as the oracle.
@Suite("ISO 8601 timestamps in UTC without ICU", .ownThreads)
struct UTCTimestampTests {
    nonisolated(unsafe) static let oracle: ISO8601DateFormatter = {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        return formatter
    }()

    @Test(
        "writes what ISO8601DateFormatter writes, and reads it back to the millisecond, over 20,000 dates from 1970 to 9999 and the edges of months, leap days and centuries"
    )
    func agreesWithFoundation() {
        var generator = SystemRandomNumberGenerator()
        var dates = (0..<20_000).map { _ in
            Date(timeIntervalSince1970: Double(Int64.random(in: 0...253_402_300_799_000, using: &generator)) / 1000)
        }
        dates += [
            "2000-02-29T23:59:59.999Z", "1900-03-01T00:00:00.000Z", "2024-12-31T23:59:59.999Z",
            "2100-02-28T12:00:00.001Z",
            "1970-01-01T00:00:00.000Z", "9999-12-31T23:59:59.999Z", "2026-11-22T15:25:23.120Z",
        ].compactMap { Self.oracle.date(from: $0) }
        var mismatches: [String] = []
        for date in dates {
            let ours = UTCTimestamp.string(from: date)
            let theirs = Self.oracle.string(from: date)
            if ours != theirs { mismatches.append("\(date.timeIntervalSince1970): \(ours) ≠ \(theirs)") }
            guard let back = UTCTimestamp.date(from: ours),
                abs(back.timeIntervalSince1970 - (date.timeIntervalSince1970 * 1000).rounded() / 1000) < 0.0005
            else {
                mismatches.append("\(ours) does not read back"); continue
            }
        }
        #expect(mismatches.isEmpty, "\(mismatches.prefix(5))")
    }

    @Test("reads seconds without a fraction, offsets, before 1970; refuses what is not a real date or not ISO 8601")
    func reads() throws {
        #expect(UTCTimestamp.date(from: "2026-11-22T15:25:23Z") == Self.oracle.date(from: "2026-11-22T15:25:23.000Z"))
        #expect(
            UTCTimestamp.date(from: "2026-11-22T16:25:23+01:00") == Self.oracle.date(from: "2026-11-22T15:25:23.000Z"))
        #expect(
            UTCTimestamp.date(from: "2026-11-22T10:25:23.5-0500")?.timeIntervalSince1970
                == Self.oracle.date(from: "2026-11-22T15:25:23.500Z")?.timeIntervalSince1970)
        #expect(UTCTimestamp.date(from: "1969-12-31T23:59:59.250Z")?.timeIntervalSince1970 == -0.75)
        #expect(UTCTimestamp.string(from: Date(timeIntervalSince1970: -0.75)) == "1969-12-31T23:59:59.250Z")
        for bad in [
            "", "2026-02-30T00:00:00Z", "2025-02-29T00:00:00Z", "2026-13-01T00:00:00Z", "2026-11-22T24:00:00Z",
            "2026-11-22T15:25:23",
            "2026-11-22 15:25:23Z", "2026-11-22T15:25:23.Z", "2026-11-22T15:25:23Zjunk", "26-11-22T15:25:23Z",
            "2026-11-22T15:25:60Z",
            "2026-11-22T15:25:23+25:00", "٢٠٢٦-11-22T15:25:23Z",
        ] {
            #expect(UTCTimestamp.date(from: bad) == nil, "\(bad)")
        }
    }
}
