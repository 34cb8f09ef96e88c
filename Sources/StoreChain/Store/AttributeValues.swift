/// An object's attribute values by name: what ``Node/attributes`` holds.
///
/// Reads like a `[String: Value]`: a subscript by name (`nil` for a name it does not hold),
/// iteration as `(key, value)` pairs, dictionary literals. It is stored as two arrays, the names
/// in ascending order and the values beside them, so that the nodes one source builds for an
/// entity share one names array and each pays for its values only: a dictionary per node cost
/// about three times as much memory. Looking a name up compares it with the few names held.
///
/// ```swift
/// var attributes: AttributeValues = ["name": "Muse", "founded": 1994]
/// attributes["country"] = "UK"
/// for (name, value) in attributes { print(name, value) }  // country, founded, name
/// ```
public struct AttributeValues: Sendable, Hashable, RandomAccessCollection, ExpressibleByDictionaryLiteral {
    public typealias Element = (key: String, value: Value)

    /// The names held, ascending and unique.
    public private(set) var keys: [String]
    /// The value of each name in `keys`, at the same position.
    public private(set) var values: [Value]

    /// No values.
    public init() {
        keys = []
        values = []
    }

    /// Values for `names`, at the same positions. When `names` is ascending and unique (a model's
    /// attribute names, sorted once), the array is kept as given, so that values built from one
    /// names array share it; otherwise the pairs are sorted, and a repeated name keeps its last
    /// value.
    public init(names: [String], values: [Value]) {
        precondition(names.count == values.count, "AttributeValues: \(names.count) names for \(values.count) values")
        if names.indices.dropFirst().allSatisfy({ names[$0 - 1] < names[$0] }) {
            self.init(ascendingNames: names, values: values)
        } else {
            self.init(zip(names, values))
        }
    }

    /// Names known to be ascending and unique (``EntityDescription/attributeValues(_:)``), kept as given.
    init(ascendingNames: [String], values: [Value]) {
        self.keys = ascendingNames
        self.values = values
    }

    /// The pairs of a dictionary.
    public init(_ dictionary: [String: Value]) {
        self.init(dictionary.lazy.map { ($0.key, $0.value) })
    }

    public init(dictionaryLiteral elements: (String, Value)...) {
        self.init(elements)
    }

    /// The pairs in any order; a repeated name keeps its last value. Sorted once (inserting pair
    /// by pair in place was quadratic in the number of names).
    private init(_ pairs: some Sequence<(String, Value)>) {
        let ordered = pairs.enumerated().sorted { ($0.element.0, $0.offset) < ($1.element.0, $1.offset) }
        keys = []
        values = []
        keys.reserveCapacity(ordered.count)
        values.reserveCapacity(ordered.count)
        for (_, (name, value)) in ordered {
            if keys.last == name {
                values[values.count - 1] = value
            } else {
                keys.append(name)
                values.append(value)
            }
        }
    }

    /// The pairs as a dictionary.
    public var dictionary: [String: Value] {
        Dictionary(uniqueKeysWithValues: zip(keys, values))
    }

    /// The value of `name`, or `nil` when it is not held. Setting `nil` removes the name.
    public subscript(name: String) -> Value? {
        get {
            guard case .found(let position) = search(name) else { return nil }
            return values[position]
        }
        set {
            switch (search(name), newValue) {
            case (.found(let position), let value?): values[position] = value
            case (.found(let position), nil):
                keys.remove(at: position)
                values.remove(at: position)
            case (.insertion(let position), let value?):
                keys.insert(name, at: position)
                values.insert(value, at: position)
            case (.insertion, nil): break
            }
        }
    }

    /// Removes `name`; returns the value it had.
    @discardableResult
    public mutating func removeValue(forKey name: String) -> Value? {
        guard case .found(let position) = search(name) else { return nil }
        keys.remove(at: position)
        return values.remove(at: position)
    }

    /// The pairs `isIncluded` keeps, as a dictionary's `filter` does.
    public func filter(_ isIncluded: (Element) throws -> Bool) rethrows -> AttributeValues {
        var kept = AttributeValues()
        for element in self where try isIncluded(element) {
            kept.keys.append(element.key)
            kept.values.append(element.value)
        }
        return kept
    }

    // MARK: Collection

    public var startIndex: Int { 0 }
    public var endIndex: Int { keys.count }

    public subscript(position: Int) -> Element {
        (keys[position], values[position])
    }

    // MARK: Equality

    public static func == (left: Self, right: Self) -> Bool {
        left.keys == right.keys && left.values == right.values
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(keys)
        hasher.combine(values)
    }

    // MARK: Search

    private enum Place {
        case found(Int)
        case insertion(Int)
    }

    /// Where `name` is, or where it would go. Few names: a scan comparing equal strings (a small
    /// string compares as two words) beats hashing; many: a binary search.
    private func search(_ name: String) -> Place {
        if keys.count <= 8 {
            for position in keys.indices where keys[position] == name { return .found(position) }
            return .insertion(keys.firstIndex { name < $0 } ?? keys.count)
        }
        var low = 0
        var high = keys.count
        while low < high {
            let middle = (low + high) / 2
            if keys[middle] < name {
                low = middle + 1
            } else {
                high = middle
            }
        }
        return low < keys.count && keys[low] == name ? .found(low) : .insertion(low)
    }
}

extension AttributeValues: CustomStringConvertible, CustomDebugStringConvertible {
    /// `["founded": 1994, "name": "Muse"]`, like a dictionary's.
    public var description: String {
        guard !isEmpty else { return "[:]" }
        return "[" + map { "\(String(reflecting: $0.key)): \(String(reflecting: $0.value))" }.joined(separator: ", ")
            + "]"
    }

    public var debugDescription: String { description }
}

extension AttributeValues: Codable {
    /// Decodes a JSON object of names and values, as a `[String: Value]` is.
    public init(from decoder: any Decoder) throws {
        self.init(try [String: Value](from: decoder))
    }

    /// Encodes a JSON object of names and values, as a `[String: Value]` is.
    public func encode(to encoder: any Encoder) throws {
        try dictionary.encode(to: encoder)
    }
}
