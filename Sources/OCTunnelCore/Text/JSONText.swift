import Foundation

/// One line of compact JSON with every object's keys in a stable order (by Unicode code point),
/// as `--json` events, the status answer and the home's gateway answers are written (and, laid
/// out, `config.json`). Not
/// `JSONSerialization`'s `.sortedKeys`: it orders keys with a locale-aware compare, which opens
/// ICU's collator, and the first status answer of a `tunnel up` mapped 3.5 MB of ICU data into
/// it for good that way (measured 2026-11-26). Strings, numbers and booleans are still written
/// by `JSONSerialization` (as fragments, where it sorts nothing), so they read exactly as before.
public enum JSONText {
    public static func line(_ object: [String: Any]) -> String {
        var text = ""
        guard write(object, into: &text, indent: nil) else { return "{}" }
        return text
    }

    /// The same, laid out as `JSONSerialization`'s `.prettyPrinted` lays it out (two spaces a
    /// level, `"key" : value`, an empty object or array as `{` and `}` with an empty line
    /// between), as `config.json` is written; nil when it holds something JSON cannot say.
    public static func pretty(_ object: [String: Any]) -> String? {
        var text = ""
        return write(object, into: &text, indent: "") ? text : nil
    }

    /// `value` laid out as `pretty` lays out an object, each object's keys in the order it holds
    /// them (config.json as `ConfigFile` writes it).
    public static func pretty(_ value: JSONValue) -> String? {
        var text = ""
        return write(value, into: &text, indent: "") ? text : nil
    }

    /// Appends `value`, compact when `indent` is nil, else laid out from that indentation;
    /// false when it holds something JSON cannot say.
    private static func write(_ value: Any, into text: inout String, indent: String?) -> Bool {
        let inner = indent.map { $0 + "  " }
        func open(_ bracket: String, empty: Bool) {
            text += bracket
            if let indent, empty { text += "\n\n" + indent }
        }
        func element(_ index: Int) {
            if index > 0 { text += "," }
            if let inner { text += "\n" + inner }
        }
        func close(_ bracket: String, empty: Bool) {
            if let indent, !empty { text += "\n" + indent }
            text += bracket
        }
        if let members = members(of: value) {
            open("{", empty: members.isEmpty)
            for (index, (key, member)) in members.enumerated() {
                element(index)
                guard fragment(key, into: &text) else { return false }
                text += indent == nil ? ":" : " : "
                guard write(member, into: &text, indent: inner) else { return false }
            }
            close("}", empty: members.isEmpty)
            return true
        }
        if let array = items(of: value) {
            open("[", empty: array.isEmpty)
            for (index, item) in array.enumerated() {
                element(index)
                guard write(item, into: &text, indent: inner) else { return false }
            }
            close("]", empty: array.isEmpty)
            return true
        }
        if case .number(let number)? = value as? JSONValue, let written = number.text {
            text += written // as the file wrote it (JSONSerialization accepted the whole text)
            return true
        }
        return fragment((value as? JSONValue)?.foundation ?? value, into: &text)
    }

    /// An object's members in the order they are written: a dictionary's by key, a `JSONValue`'s
    /// as it holds them; nil for anything else.
    private static func members(of value: Any) -> [(String, Any)]? {
        if let json = value as? JSONValue {
            guard case .object(let object) = json else { return nil }
            return object.members.map { ($0.key, $0.value as Any) }
        }
        guard let object = value as? [String: Any] else { return nil }
        return object.keys.sorted().map { ($0, object[$0]!) }
    }

    /// An array's items; nil for anything else.
    private static func items(of value: Any) -> [Any]? {
        if let json = value as? JSONValue {
            guard case .array(let items) = json else { return nil }
            return items
        }
        return value as? [Any]
    }

    private static func fragment(_ value: Any, into text: inout String) -> Bool {
        guard JSONSerialization.isValidJSONObject([value]),
            let data = try? JSONSerialization.data(
                withJSONObject: value, options: [.fragmentsAllowed, .withoutEscapingSlashes])
        else { return false }
        text += String(decoding: data, as: UTF8.self)
        return true
    }
}
