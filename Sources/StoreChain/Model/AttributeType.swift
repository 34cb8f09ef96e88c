/// The type of an attribute's values.
public enum AttributeType: String, Sendable, Hashable, CaseIterable, Codable {
    /// `string`, `integer` (64-bit), `double`, `decimal`, `boolean`, `date`, `data`, `uuid`, `url`,
    /// and `json` (any JSON value, kept as written).
    case string, integer, double, decimal, boolean, date, data, uuid, url, json

    /// Whether values of this type can be ordered with `<` and sorted.
    package var isOrdered: Bool {
        switch self {
        case .string, .integer, .double, .decimal, .date, .boolean, .uuid, .url: true
        case .data, .json: false
        }
    }

    package var isNumeric: Bool {
        self == .integer || self == .double || self == .decimal
    }

    /// Whether an entity's key may have this type.
    package var canBeKey: Bool {
        self == .string || self == .integer || self == .uuid
    }
}
