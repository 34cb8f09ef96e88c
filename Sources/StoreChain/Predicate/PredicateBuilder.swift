/// A typed key for building predicates in Swift; produces the same AST as parsing.
///
/// ```swift
/// enum Album {
///     static let title = Key<String>("title")
///     static let year = Key<Int>("year")
///     static let band = ToOne("band")
/// }
/// let predicate = Album.year >= 1990 && Album.title.beginsWith("rue", options: .caseInsensitive)
/// // year >= 1990 AND title BEGINSWITH[c] "rue"
/// ```
public struct Key<T: StoredValue>: Sendable, Hashable {
    /// The key path or aggregate the key stands for.
    public let expression: Operand
    /// The quantifier (`ANY`, `ALL`, `NONE`) of a key reached through a to-many relationship.
    public let modifier: Comparison.Modifier

    /// A key path from the evaluated object, such as `"name"` or `"band.name"`.
    public init(_ keyPath: String) {
        self.init(.keyPath(keyPath.split(separator: ".").map(String.init)), modifier: .direct)
    }

    init(_ expression: Operand, modifier: Comparison.Modifier) {
        self.expression = expression
        self.modifier = modifier
    }

    func compare(_ op: Comparison.Operator, _ rhs: Operand, _ options: Comparison.Options = []) -> FetchPredicate {
        .comparison(Comparison(expression, op, rhs, options: options, modifier: modifier))
    }

    public static func == (key: Key, value: T) -> FetchPredicate {
        key.compare(.equal, .constant(value.storedValue))
    }
    public static func != (key: Key, value: T) -> FetchPredicate {
        key.compare(.notEqual, .constant(value.storedValue))
    }
    /// `key < value`
    public static func < (key: Key, value: T) -> FetchPredicate { key.compare(.less, .constant(value.storedValue)) }
    /// `key <= value`
    public static func <= (key: Key, value: T) -> FetchPredicate {
        key.compare(.lessOrEqual, .constant(value.storedValue))
    }
    /// `key > value`
    public static func > (key: Key, value: T) -> FetchPredicate {
        key.compare(.greater, .constant(value.storedValue))
    }
    /// `key >= value`
    public static func >= (key: Key, value: T) -> FetchPredicate {
        key.compare(.greaterOrEqual, .constant(value.storedValue))
    }

    /// `key == nil`
    public static func == (key: Key, _: _OptionalNilComparisonType) -> FetchPredicate {
        key.compare(.equal, .constant(.null))
    }
    /// `key != nil`
    public static func != (key: Key, _: _OptionalNilComparisonType) -> FetchPredicate {
        key.compare(.notEqual, .constant(.null))
    }

    /// Compares two key paths of the same type, such as `price > discount`.
    public static func == (key: Key, other: Key) -> FetchPredicate { key.compare(.equal, other.expression) }
    /// `key < other`, two key paths of the same object.
    public static func < (key: Key, other: Key) -> FetchPredicate { key.compare(.less, other.expression) }
    /// `key > other`, two key paths of the same object.
    public static func > (key: Key, other: Key) -> FetchPredicate { key.compare(.greater, other.expression) }

    /// `key IN {values}`
    public func isIn(_ values: [T]) -> FetchPredicate {
        compare(.in, .array(values.map { .constant($0.storedValue) }))
    }

    /// `key BETWEEN {low, high}`, inclusive.
    public func between(_ low: T, _ high: T) -> FetchPredicate {
        compare(.between, .array([.constant(low.storedValue), .constant(high.storedValue)]))
    }
}

extension Key where T == String {
    /// `key ==[options] value`, for case- or diacritic-insensitive equality.
    public func equals(_ value: String, options: Comparison.Options) -> FetchPredicate {
        compare(.equal, .constant(.string(value)), options)
    }

    /// `key BEGINSWITH prefix`
    public func beginsWith(_ prefix: String, options: Comparison.Options = []) -> FetchPredicate {
        compare(.beginsWith, .constant(.string(prefix)), options)
    }

    /// `key ENDSWITH suffix`
    public func endsWith(_ suffix: String, options: Comparison.Options = []) -> FetchPredicate {
        compare(.endsWith, .constant(.string(suffix)), options)
    }

    /// `key CONTAINS part`
    public func contains(_ part: String, options: Comparison.Options = []) -> FetchPredicate {
        compare(.contains, .constant(.string(part)), options)
    }

    /// `LIKE` with `*` and `?` wildcards.
    public func like(_ pattern: String, options: Comparison.Options = []) -> FetchPredicate {
        compare(.like, .constant(.string(pattern)), options)
    }

    /// Whole-string regular expression match.
    public func matches(_ pattern: String, options: Comparison.Options = []) -> FetchPredicate {
        compare(.matches, .constant(.string(pattern)), options)
    }
}

/// A to-one relationship key: compare it with nil, or reach an attribute through it.
public struct ToOne: Sendable, Hashable {
    /// The key path to the relationship.
    public let components: [String]

    /// The to-one relationship at `keyPath` (`"band"`, `"album.band"`).
    public init(_ keyPath: String) {
        components = keyPath.split(separator: ".").map(String.init)
    }

    /// An attribute of the destination: `Album.band.key(Band.name)` is `band.name`.
    public func key<T>(_ key: Key<T>) -> Key<T> {
        guard case .keyPath(let rest) = key.expression else { return key }
        return Key(.keyPath(components + rest), modifier: key.modifier)
    }

    public static func == (key: ToOne, _: _OptionalNilComparisonType) -> FetchPredicate {
        .comparison(Comparison(.keyPath(key.components), .equal, .constant(.null)))
    }

    public static func != (key: ToOne, _: _OptionalNilComparisonType) -> FetchPredicate {
        .comparison(Comparison(.keyPath(key.components), .notEqual, .constant(.null)))
    }
}

/// A to-many relationship key: quantify over its objects, or aggregate them.
public struct ToMany: Sendable, Hashable {
    /// The key path to the relationship.
    public let components: [String]

    /// The to-many relationship at `keyPath` (`"albums"`, `"band.albums"`).
    public init(_ keyPath: String) {
        components = keyPath.split(separator: ".").map(String.init)
    }

    /// `ANY albums.year …`: at least one related object matches.
    public func any<T>(_ key: Key<T>) -> Key<T> { quantified(key, .any) }
    /// `ALL albums.year …`: every related object matches (true when there are none).
    public func all<T>(_ key: Key<T>) -> Key<T> { quantified(key, .all) }
    /// `NONE albums.year …`: no related object matches.
    public func none<T>(_ key: Key<T>) -> Key<T> { quantified(key, .none) }

    /// `albums.@count`
    public var count: Key<Int> { Key(.aggregate(.count, collection: components, property: []), modifier: .direct) }

    /// `albums.@sum.price` (an integer sum for integer attributes; compare with a number).
    public func sum<T>(_ key: Key<T>) -> Key<Double> { aggregate(.sum, key) }
    /// `albums.@avg.price`
    public func avg<T>(_ key: Key<T>) -> Key<Double> { aggregate(.avg, key) }
    /// `albums.@min.year`
    public func min<T>(_ key: Key<T>) -> Key<T> { aggregate(.min, key) }
    /// `albums.@max.year`
    public func max<T>(_ key: Key<T>) -> Key<T> { aggregate(.max, key) }

    private func quantified<T>(_ key: Key<T>, _ modifier: Comparison.Modifier) -> Key<T> {
        guard case .keyPath(let rest) = key.expression else { return key }
        return Key(.keyPath(components + rest), modifier: modifier)
    }

    private func aggregate<T, R>(_ function: Operand.Aggregate, _ key: Key<T>) -> Key<R> {
        guard case .keyPath(let property) = key.expression else { return Key(key.expression, modifier: .direct) }
        return Key(.aggregate(function, collection: components, property: property), modifier: .direct)
    }
}
