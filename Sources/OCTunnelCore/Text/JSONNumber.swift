/// A JSON number that is not an `Int`: its value, and the text it was read from when it was read
/// from a file, so that writing the file back keeps a number the way the person wrote it (a
/// 49-digit number is not rewritten as `4.096111111111111e+48`). Two numbers are equal when
/// their values are.
public struct JSONNumber: Equatable, Sendable, ExpressibleByFloatLiteral {
    public let value: Double
    /// The number's JSON text as read, or nil for a number made in code.
    public let text: String?

    public init(_ value: Double, text: String? = nil) {
        self.value = value
        self.text = text
    }

    public init(floatLiteral value: Double) { self.init(value) }

    public static func == (left: JSONNumber, right: JSONNumber) -> Bool { left.value == right.value }
}
