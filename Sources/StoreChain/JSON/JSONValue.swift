/// A parsed JSON document. Integers that fit in `Int` stay exact; other numbers are `Double`.
public enum JSONValue: Sendable, Hashable {
    /// `null`.
    case null
    /// `true` or `false`.
    case bool(Bool)
    /// A number without a fraction or exponent that fits an `Int`.
    case integer(Int)
    /// Any other number.
    case double(Double)
    /// A string.
    case string(String)
    /// An array.
    case array([JSONValue])
    /// An object; the order of its keys is not kept.
    case object([String: JSONValue])

    /// A short name of the JSON type, for error messages.
    package var typeName: String {
        switch self {
        case .null: "null"
        case .bool: "boolean"
        case .integer, .double: "number"
        case .string: "string"
        case .array: "array"
        case .object: "object"
        }
    }

    /// The value at `key` when this is an object.
    public subscript(key: String) -> JSONValue? {
        if case .object(let members) = self { return members[key] }
        return nil
    }
}

extension JSONValue: CustomStringConvertible {
    /// Compact JSON text with object keys in sorted order (stable output for tests and diffs).
    public var description: String {
        var text = ""
        JSONWriter.write(self, into: &text)
        return text
    }
}

/// Writes JSON text. Object keys are sorted so the same value always gives the same text.
package enum JSONWriter {
    package static func write(_ value: JSONValue, into text: inout String) {
        switch value {
        case .null: text += "null"
        case .bool(let flag): text += flag ? "true" : "false"
        case .integer(let number): text += String(number)
        case .double(let number):
            text += number.isFinite ? number.description : "null"
        case .string(let string): writeString(string, into: &text)
        case .array(let elements):
            text += "["
            for (index, element) in elements.enumerated() {
                if index > 0 { text += "," }
                write(element, into: &text)
            }
            text += "]"
        case .object(let members):
            text += "{"
            for (index, key) in members.keys.sorted().enumerated() {
                if index > 0 { text += "," }
                writeString(key, into: &text)
                text += ":"
                write(members[key] ?? .null, into: &text)
            }
            text += "}"
        }
    }

    /// Writes a JSON string literal with the escapes RFC 8259 requires.
    package static func writeString(_ string: String, into text: inout String) {
        text += "\""
        for scalar in string.unicodeScalars {
            switch scalar {
            case "\"": text += "\\\""
            case "\\": text += "\\\\"
            case "\n": text += "\\n"
            case "\r": text += "\\r"
            case "\t": text += "\\t"
            case _ where scalar.value < 0x20:
                let hex = String(scalar.value, radix: 16)
                text += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
            default: text.unicodeScalars.append(scalar)
            }
        }
        text += "\""
    }
}
