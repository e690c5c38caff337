import Foundation

/// ISO 8601 timestamps in UTC (`2026-11-22T15:25:23.120Z`), written and read by arithmetic on the
/// calendar, not by Foundation's `ISO8601DateFormatter`: that one goes through ICU, and answering
/// one `tunnel status` with it mapped 5.2 MB of ICU's calendar data into `tunnel up` for good
/// (RSS 28 → 35 MB, measured 2026-11-26). Days ↔ civil dates: Howard Hinnant's `days_from_civil`
/// and `civil_from_days` (proleptic Gregorian, exact for every year 1-9999).
public enum UTCTimestamp {
    /// `YYYY-MM-DDTHH:MM:SS.mmmZ`, to the nearest millisecond (as ISO8601DateFormatter writes it).
    public static func string(from date: Date) -> String {
        let totalMilliseconds = Int64((date.timeIntervalSince1970 * 1000).rounded())
        let (days, dayMilliseconds) = totalMilliseconds.floorDivided(by: 86_400_000)
        let (year, month, day) = civil(fromDays: days)
        let seconds = dayMilliseconds / 1000
        return pad(year, 4) + "-" + pad(month, 2) + "-" + pad(day, 2) + "T" + pad(seconds / 3600, 2) + ":"
            + pad(seconds / 60 % 60, 2)
            + ":" + pad(seconds % 60, 2) + "." + pad(dayMilliseconds % 1000, 3) + "Z"
    }

    /// `YYYY-MM-DDTHH:MM:SS`, then optional fractional seconds, then `Z` or an offset
    /// (`+HH:MM`, `-HHMM`); nil for anything else (a date that does not exist included).
    public static func date(from text: String) -> Date? {
        var scanner = DigitScanner(Array(text.utf8))
        guard let year = scanner.number(4), scanner.take("-"), let month = scanner.number(2), scanner.take("-"),
            let day = scanner.number(2), scanner.take("T") || scanner.take("t"), let hour = scanner.number(2),
            scanner.take(":"),
            let minute = scanner.number(2), scanner.take(":"), let second = scanner.number(2)
        else { return nil }
        guard (1...12).contains(month), day >= 1, day <= daysIn(month: month, year: year), hour < 24, minute < 60,
            second < 60
        else { return nil }
        var fraction = 0.0
        if scanner.take(".") || scanner.take(",") {
            var scale = 0.1
            var digits = 0
            while let digit = scanner.digit() {
                fraction += Double(digit) * scale
                scale /= 10
                digits += 1
                guard digits <= 9 else { return nil }
            }
            guard digits > 0 else { return nil }
        }
        var offset = 0
        if scanner.take("Z") || scanner.take("z") {
        } else if let sign = scanner.sign() {
            guard let hours = scanner.number(2), hours < 24 else { return nil }
            _ = scanner.take(":")
            guard let minutes = scanner.number(2), minutes < 60 else { return nil }
            offset = sign * (hours * 3600 + minutes * 60)
        } else {
            return nil
        }
        guard scanner.atEnd else { return nil }
        let days = Self.days(fromYear: year, month: month, day: day)
        let seconds = Double(days) * 86_400 + Double(hour * 3600 + minute * 60 + second - offset)
        return Date(timeIntervalSince1970: seconds + fraction)
    }

    /// Days since 1970-01-01 of a civil date.
    static func days(fromYear year: Int, month: Int, day: Int) -> Int64 {
        let y = Int64(month <= 2 ? year - 1 : year)
        let era = (y >= 0 ? y : y - 399) / 400
        let yearOfEra = y - era * 400
        let dayOfYear = Int64((153 * (month + (month > 2 ? -3 : 9)) + 2) / 5 + day - 1)
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }

    /// The civil date of a day count since 1970-01-01.
    static func civil(fromDays count: Int64) -> (year: Int, month: Int, day: Int) {
        let z = count + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let dayOfEra = z - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let monthIndex = (5 * dayOfYear + 2) / 153
        let day = Int(dayOfYear - (153 * monthIndex + 2) / 5 + 1)
        let month = Int(monthIndex < 10 ? monthIndex + 3 : monthIndex - 9)
        let year = Int(yearOfEra + era * 400) + (month <= 2 ? 1 : 0)
        return (year, month, day)
    }

    private static func daysIn(month: Int, year: Int) -> Int {
        switch month {
        case 2: return year % 4 == 0 && (year % 100 != 0 || year % 400 == 0) ? 29 : 28
        case 4, 6, 9, 11: return 30
        default: return 31
        }
    }

    private static func pad<T: BinaryInteger>(_ value: T, _ width: Int) -> String {
        let text = String(value)
        return text.count >= width ? text : String(repeating: "0", count: width - text.count) + text
    }
}

/// Reads fixed-width digits and single characters off a byte string.
private struct DigitScanner {
    private let bytes: [UInt8]
    private var index = 0

    init(_ bytes: [UInt8]) { self.bytes = bytes }

    var atEnd: Bool { index == bytes.count }

    mutating func digit() -> Int? {
        guard index < bytes.count, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(bytes[index]) else { return nil }
        defer { index += 1 }
        return Int(bytes[index] - UInt8(ascii: "0"))
    }

    /// Exactly `width` digits.
    mutating func number(_ width: Int) -> Int? {
        var value = 0
        for _ in 0..<width {
            guard let digit = digit() else { return nil }
            value = value * 10 + digit
        }
        return value
    }

    mutating func take(_ character: Unicode.Scalar) -> Bool {
        guard index < bytes.count, bytes[index] == UInt8(ascii: character) else { return false }
        index += 1
        return true
    }

    /// `+` as 1, `-` as -1.
    mutating func sign() -> Int? {
        if take("+") { return 1 }
        if take("-") { return -1 }
        return nil
    }
}

private extension Int64 {
    /// Quotient and remainder rounded toward minus infinity (a time before 1970 stays in its day).
    func floorDivided(by divisor: Int64) -> (Int64, Int64) {
        let quotient = self / divisor
        let remainder = self % divisor
        return remainder < 0 ? (quotient - 1, remainder + divisor) : (quotient, remainder)
    }
}
