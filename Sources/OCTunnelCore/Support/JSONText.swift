import Foundation

/// One line of compact JSON with every object's keys in a stable order (by Unicode code point),
/// as `--json` events, the status answer and the home's gateway answers are written. Not
/// `JSONSerialization`'s `.sortedKeys`: it orders keys with a locale-aware compare, which opens
/// ICU's collator, and the first status answer of a `tunnel up` mapped 3.5 MB of ICU data into
/// it for good that way (measured 2026-11-26). Strings, numbers and booleans are still written
/// by `JSONSerialization` (as fragments, where it sorts nothing), so they read exactly as before.
public enum JSONText {
    public static func line(_ object: [String: Any]) -> String {
        var text = ""
        guard write(object, into: &text) else { return "{}" }
        return text
    }

    /// Appends `value`; false when it holds something JSON cannot say.
    private static func write(_ value: Any, into text: inout String) -> Bool {
        if let object = value as? [String: Any] {
            text += "{"
            for (index, key) in object.keys.sorted().enumerated() {
                if index > 0 { text += "," }
                guard fragment(key, into: &text) else { return false }
                text += ":"
                guard write(object[key]!, into: &text) else { return false }
            }
            text += "}"
            return true
        }
        if let array = value as? [Any] {
            text += "["
            for (index, element) in array.enumerated() {
                if index > 0 { text += "," }
                guard write(element, into: &text) else { return false }
            }
            text += "]"
            return true
        }
        return fragment(value, into: &text)
    }

    private static func fragment(_ value: Any, into text: inout String) -> Bool {
        guard JSONSerialization.isValidJSONObject([value]),
              let data = try? JSONSerialization.data(withJSONObject: value, options: [.fragmentsAllowed, .withoutEscapingSlashes]) else { return false }
        text += String(decoding: data, as: UTF8.self)
        return true
    }
}
