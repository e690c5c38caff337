/// A JSON object's members, in order: as the text that was read wrote them (`JSONValue.parse`),
/// else by key. A new key goes in its place by key when the keys are in key order (as octunnel
/// writes them: they stay so), else last (after a person's own order). Two objects are equal
/// when their members are, whatever the order.
public struct JSONObject: Equatable, Sendable, ExpressibleByDictionaryLiteral {
    /// The keys, in order.
    public private(set) var keys: [String]
    private var values: [String: JSONValue]

    /// `members`, by key.
    public init(_ members: [String: JSONValue] = [:]) {
        keys = members.keys.sorted()
        values = members
    }

    public init(dictionaryLiteral elements: (String, JSONValue)...) {
        self.init(Dictionary(elements) { $1 })
    }

    public var isEmpty: Bool { keys.isEmpty }

    /// The members, in order.
    public var members: [(key: String, value: JSONValue)] { keys.map { ($0, values[$0]!) } }

    /// A member; setting a new key inserts it, setting nil removes it, setting a present key keeps its place.
    public subscript(key: String) -> JSONValue? {
        get { values[key] }
        set {
            if newValue == nil {
                keys.removeAll { $0 == key }
            } else if values[key] == nil {
                let inKeyOrder = zip(keys, keys.dropFirst()).allSatisfy { $0 < $1 }
                keys.insert(key, at: inKeyOrder ? keys.firstIndex { $0 > key } ?? keys.count : keys.count)
            }
            values[key] = newValue
        }
    }

    /// These members with `other`'s laid over them (a key of both takes `other`'s value in this one's place).
    public func merging(_ other: JSONObject) -> JSONObject {
        var merged = self
        for (key, value) in other.members { merged[key] = value }
        return merged
    }

    /// Adds a member read from a text after the others; a key read again keeps its place and
    /// takes the later value.
    mutating func append(_ key: String, _ value: JSONValue) {
        if values[key] == nil { keys.append(key) }
        values[key] = value
    }

    /// The members as `JSONSerialization` holds an object.
    public var foundation: [String: Any] { values.mapValues(\.foundation) }

    public static func == (left: JSONObject, right: JSONObject) -> Bool { left.values == right.values }
}
