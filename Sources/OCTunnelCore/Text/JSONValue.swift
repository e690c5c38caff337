import Foundation

/// Any JSON value, decoded whole: what a file holds that octunnel keeps without knowing it
/// (config.json's keys from a newer version or a person's hand), read with `JSONDecoder`
/// (`parse`: every object's keys in the text's order) and written back by `JSONText` in that order.
public enum JSONValue: Codable, Equatable, Sendable {
    case object(JSONObject)
    case array([JSONValue])
    case string(String)
    /// A number written without a fraction that fits an `Int`.
    case integer(Int)
    /// Any other number, with its text when it was read from one.
    case number(JSONNumber)
    case bool(Bool)
    case null

    /// `value` as `JSONEncoder` writes it, read back as a JSON value.
    public init(encoding value: some Encodable) throws {
        self = try JSONDecoder().decode(JSONValue.self, from: JSONEncoder().encode(value))
    }

    /// The JSON text `data`, accepted as `JSONSerialization` accepts one (an object or an array;
    /// `JSONDecoder` lets more through, a trailing comma for one), every object's keys in the
    /// order the text writes them; a key written twice has its last value, as `JSONSerialization` reads it.
    public static func parse(_ data: Data) throws -> JSONValue {
        _ = try JSONSerialization.jsonObject(with: data)
        var reader = JSONTextReader(bytes: Array(data))
        return reader.value()
    }

    /// Decodes any JSON value; an object's keys in key order (`parse` gives the text's).
    public init(from decoder: Decoder) throws {
        if let keyed = try? decoder.container(keyedBy: AnyKey.self) {
            var object: [String: JSONValue] = [:]
            for key in keyed.allKeys { object[key.stringValue] = try keyed.decode(JSONValue.self, forKey: key) }
            self = .object(JSONObject(object))
        } else if var unkeyed = try? decoder.unkeyedContainer() {
            var array: [JSONValue] = []
            while !unkeyed.isAtEnd { array.append(try unkeyed.decode(JSONValue.self)) }
            self = .array(array)
        } else {
            self = try Self.scalar(decoder.singleValueContainer())
        }
    }

    private static func scalar(_ single: SingleValueDecodingContainer) throws -> JSONValue {
        if single.decodeNil() { return .null }
        if let bool = try? single.decode(Bool.self) { return .bool(bool) }
        if let integer = try? single.decode(Int.self) { return .integer(integer) }
        if let number = try? single.decode(Double.self) { return .number(JSONNumber(number)) }
        return .string(try single.decode(String.self))
    }

    public func encode(to encoder: Encoder) throws {
        switch self {
        case .object(let object):
            var keyed = encoder.container(keyedBy: AnyKey.self)
            for (key, value) in object.members { try keyed.encode(value, forKey: AnyKey(key)) }
        case .array(let array):
            var unkeyed = encoder.unkeyedContainer()
            for value in array { try unkeyed.encode(value) }
        case .string(let string): try encode(string, to: encoder)
        case .integer(let integer): try encode(integer, to: encoder)
        case .number(let number): try encode(number.value, to: encoder)
        case .bool(let bool): try encode(bool, to: encoder)
        case .null:
            var single = encoder.singleValueContainer()
            try single.encodeNil()
        }
    }

    private func encode(_ scalar: some Encodable, to encoder: Encoder) throws {
        var single = encoder.singleValueContainer()
        try single.encode(scalar)
    }

    /// This value decoded as `type`, as `JSONDecoder` decodes its text.
    public func decoded<T: Decodable>(as type: T.Type) throws -> T {
        try JSONDecoder().decode(type, from: JSONEncoder().encode(self))
    }

    /// The object's members; nil for any other value.
    public var members: JSONObject? {
        guard case .object(let object) = self else { return nil }
        return object
    }

    /// The value as `JSONSerialization` holds one (dictionaries, arrays, `NSNull`), for `JSONText`.
    public var foundation: Any {
        switch self {
        case .object(let object): return object.foundation
        case .array(let array): return array.map(\.foundation)
        case .string(let string): return string
        case .integer(let integer): return integer
        case .number(let number): return number.value
        case .bool(let bool): return bool
        case .null: return NSNull()
        }
    }

    /// Any object key.
    private struct AnyKey: CodingKey {
        let stringValue: String
        var intValue: Int? { nil }
        init(_ key: String) { stringValue = key }
        init?(stringValue: String) { self.stringValue = stringValue }
        init?(intValue: Int) { nil }
    }
}
