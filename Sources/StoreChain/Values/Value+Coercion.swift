import Foundation

extension Value {
    /// Reads a JSON value as a value of `type`, accepting what real backends send: numbers given
    /// as strings, ISO-8601 or epoch-seconds dates, `"true"`/`1` for booleans.
    ///
    /// - Throws: `StoreChainError.Code.invalidData` saying what was found and what was expected.
    package static func coerce(_ json: JSONValue, to type: AttributeType) throws(StoreChainError) -> Value {
        if case .null = json { return .null }
        if let value = convert(json, to: type) { return value }
        throw StoreChainError(
            .invalidData, "cannot read \(describe(json)) as \(type.rawValue)",
            suggestion: expectation(for: type))
    }

    private static func convert(_ json: JSONValue, to type: AttributeType) -> Value? {
        switch (type, json) {
        case (.json, _): return .json(json)
        case (.string, .string(let text)): return .string(text)
        case (.string, .integer(let number)): return .string(String(number))
        case (.integer, .integer(let number)): return .integer(number)
        case (.integer, .double(let number)):
            guard number.rounded() == number, let exact = Int(exactly: number) else { return nil }
            return .integer(exact)
        case (.integer, .string(let text)):
            return Int(text.trimmingCharacters(in: .whitespaces)).map(Value.integer)
        case (.double, .integer(let number)): return .double(Double(number))
        case (.double, .double(let number)): return .double(number)
        case (.double, .string(let text)):
            guard let number = Double(text.trimmingCharacters(in: .whitespaces)), number.isFinite else { return nil }
            return .double(number)
        case (.decimal, .integer(let number)): return .decimal(Decimal(number))
        case (.decimal, .double(let number)): return decimal(from: number.description)
        case (.decimal, .string(let text)): return decimal(from: text.trimmingCharacters(in: .whitespaces))
        case (.boolean, .bool(let flag)): return .bool(flag)
        case (.boolean, .integer(let number)) where number == 0 || number == 1: return .bool(number == 1)
        case (.boolean, .string(let text)):
            switch text.lowercased() {
            case "true", "yes", "1": return .bool(true)
            case "false", "no", "0": return .bool(false)
            default: return nil
            }
        case (.date, .string(let text)):
            if let date = ISO8601.parse(text) { return .date(date) }
            return Double(text).map { .date(Date(timeIntervalSince1970: $0)) }
        case (.date, .integer(let seconds)): return .date(Date(timeIntervalSince1970: Double(seconds)))
        case (.date, .double(let seconds)): return .date(Date(timeIntervalSince1970: seconds))
        case (.data, .string(let text)): return Data(base64Encoded: text).map(Value.data)
        case (.uuid, .string(let text)): return UUID(uuidString: text).map(Value.uuid)
        case (.url, .string(let text)):
            guard !text.isEmpty, let url = URL(string: text) else { return nil }
            return .url(url)
        default: return nil
        }
    }

    private static func decimal(from text: String) -> Value? {
        guard !text.isEmpty, let decimal = Decimal(string: text, locale: Locale(identifier: "en_US_POSIX")),
            !decimal.isNaN
        else { return nil }
        return .decimal(decimal)
    }

    private static func describe(_ json: JSONValue) -> String {
        let text = json.description
        let short = text.count > 60 ? String(text.prefix(57)) + "..." : text
        return "\(json.typeName) \(short)"
    }

    private static func expectation(for type: AttributeType) -> String {
        switch type {
        case .string: "expected a string"
        case .integer: "expected a whole number, or a string holding one"
        case .double, .decimal: "expected a number, or a string holding one"
        case .boolean: "expected true/false, 1/0 or \"true\"/\"false\""
        case .date: "expected an ISO-8601 string (2001-05-03T10:00:00Z) or epoch seconds"
        case .data: "expected a base64 string"
        case .uuid: "expected a UUID string (E621E1F8-C36C-495A-93FC-0C247A3E6E5F)"
        case .url: "expected a URL string"
        case .json: "any JSON value is accepted"
        }
    }
}
