import Foundation

/// An attribute value: one case per attribute type, plus `null` for a missing value.
public enum Value: Sendable, Hashable {
    /// No value (`nil`).
    case null
    /// A `string` attribute's value.
    case string(String)
    /// An `integer` attribute's value.
    case integer(Int)
    /// A `double` attribute's value.
    case double(Double)
    /// A `decimal` attribute's value.
    case decimal(Decimal)
    /// A `boolean` attribute's value.
    case bool(Bool)
    /// A `date` attribute's value.
    case date(Date)
    /// A `data` attribute's value.
    case data(Data)
    /// A `uuid` attribute's value.
    case uuid(UUID)
    /// A `url` attribute's value.
    case url(URL)
    /// A `json` attribute's value, as written.
    case json(JSONValue)

    /// Whether it is `null`.
    public var isNull: Bool {
        if case .null = self { return true }
        return false
    }

    /// The attribute type this value belongs to, or `nil` for `null`.
    public var type: AttributeType? {
        switch self {
        case .null: nil
        case .string: .string
        case .integer: .integer
        case .double: .double
        case .decimal: .decimal
        case .bool: .boolean
        case .date: .date
        case .data: .data
        case .uuid: .uuid
        case .url: .url
        case .json: .json
        }
    }

    /// The value as a `Double` when it is a number.
    public var numericValue: Double? {
        switch self {
        case .integer(let value): Double(value)
        case .double(let value): value
        case .decimal(let value): NSDecimalNumber(decimal: value).doubleValue
        default: nil
        }
    }

    /// The string, or `nil` when it holds another kind.
    public var stringValue: String? {
        if case .string(let value) = self { return value }
        return nil
    }
}

extension Value: CustomStringConvertible {
    /// A readable form for tables and messages: strings unquoted, dates in ISO-8601.
    public var description: String {
        switch self {
        case .null: "nil"
        case .string(let value): value
        case .integer(let value): String(value)
        case .double(let value): value.description
        case .decimal(let value): value.description
        case .bool(let value): value ? "true" : "false"
        case .date(let value): ISO8601.format(value)
        case .data(let value): value.base64EncodedString()
        case .uuid(let value): value.uuidString
        case .url(let value): value.absoluteString
        case .json(let value): value.description
        }
    }

    /// The value as JSON: dates as ISO-8601 strings, data as base64, decimals as numbers.
    public var jsonValue: JSONValue {
        switch self {
        case .null: .null
        case .string(let value): .string(value)
        case .integer(let value): .integer(value)
        case .double(let value): .double(value)
        case .decimal(let value): .double(NSDecimalNumber(decimal: value).doubleValue)
        case .bool(let value): .bool(value)
        case .date(let value): .string(ISO8601.format(value))
        case .data(let value): .string(value.base64EncodedString())
        case .uuid(let value): .string(value.uuidString)
        case .url(let value): .string(value.absoluteString)
        case .json(let value): value
        }
    }
}

extension Value: ExpressibleByStringLiteral, ExpressibleByIntegerLiteral, ExpressibleByFloatLiteral,
    ExpressibleByBooleanLiteral, ExpressibleByNilLiteral
{
    public init(stringLiteral value: String) { self = .string(value) }
    public init(integerLiteral value: Int) { self = .integer(value) }
    public init(floatLiteral value: Double) { self = .double(value) }
    public init(booleanLiteral value: Bool) { self = .bool(value) }
    public init(nilLiteral: ()) { self = .null }
}

extension Value: Codable {
    private enum CodingKeys: String, CodingKey {
        case string, integer, double, decimal, bool, date, data, uuid, url, json
    }

    /// Encodes as a one-key object naming the type (`{"date": 1234.5}`), or `null`.
    public func encode(to encoder: any Encoder) throws {
        if case .null = self {
            var container = encoder.singleValueContainer()
            try container.encodeNil()
            return
        }
        var container = encoder.container(keyedBy: CodingKeys.self)
        switch self {
        case .null: break
        case .string(let value): try container.encode(value, forKey: .string)
        case .integer(let value): try container.encode(value, forKey: .integer)
        case .double(let value): try container.encode(value, forKey: .double)
        case .decimal(let value): try container.encode(value.description, forKey: .decimal)
        case .bool(let value): try container.encode(value, forKey: .bool)
        case .date(let value): try container.encode(value.timeIntervalSince1970, forKey: .date)
        case .data(let value): try container.encode(value, forKey: .data)
        case .uuid(let value): try container.encode(value, forKey: .uuid)
        case .url(let value): try container.encode(value, forKey: .url)
        case .json(let value): try container.encode(value.description, forKey: .json)
        }
    }

    public init(from decoder: any Decoder) throws {
        if let single = try? decoder.singleValueContainer(), single.decodeNil() {
            self = .null
            return
        }
        let container = try decoder.container(keyedBy: CodingKeys.self)
        guard let key = container.allKeys.first, container.allKeys.count == 1 else {
            throw DecodingError.dataCorrupted(
                .init(codingPath: decoder.codingPath, debugDescription: "expected one type key"))
        }
        switch key {
        case .string: self = .string(try container.decode(String.self, forKey: key))
        case .integer: self = .integer(try container.decode(Int.self, forKey: key))
        case .double: self = .double(try container.decode(Double.self, forKey: key))
        case .bool: self = .bool(try container.decode(Bool.self, forKey: key))
        case .data: self = .data(try container.decode(Data.self, forKey: key))
        case .uuid: self = .uuid(try container.decode(UUID.self, forKey: key))
        case .url: self = .url(try container.decode(URL.self, forKey: key))
        case .date:
            self = .date(Date(timeIntervalSince1970: try container.decode(Double.self, forKey: key)))
        case .decimal:
            let text = try container.decode(String.self, forKey: key)
            guard let decimal = Decimal(string: text, locale: Locale(identifier: "en_US_POSIX")) else {
                throw DecodingError.dataCorruptedError(
                    forKey: key, in: container, debugDescription: "'\(text)' is not a decimal")
            }
            self = .decimal(decimal)
        case .json:
            let text = try container.decode(String.self, forKey: key)
            do {
                self = .json(try JSONParser().parse(text))
            } catch {
                throw DecodingError.dataCorruptedError(
                    forKey: key, in: container, debugDescription: error.description)
            }
        }
    }
}
