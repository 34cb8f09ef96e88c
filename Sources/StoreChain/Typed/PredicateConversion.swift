import Foundation

extension FetchPredicate {
    /// Converts a Foundation predicate over a generated type's fields into StoreChain's own,
    /// the same one the string form parses to:
    ///
    /// ```swift
    /// let recent = try FetchPredicate(#Predicate<Album.Fields> { $0.band.country == "IS" && ($0.year ?? 0) > 1999 })
    /// recent.format   // band.country == "IS" AND year > 1999
    /// ```
    ///
    /// Comparisons, `&&`, `||`, `!`, `?.` and `if let` through optionals, `??` with a constant,
    /// `starts(with:)`, `contains(_:)` on a string or on a constant array or range,
    /// `contains(where:)` (`ANY`) over a to-many relationship with comparisons joined by `||`,
    /// `allSatisfy` (`ALL`) with comparisons joined by `&&`, and `count`/`isEmpty` of a to-many
    /// relationship (`@count`) convert. A missing value behaves as Swift's `nil` does.
    ///
    /// - Throws: `unsupported-predicate` naming the part of the expression that has no
    ///   equivalent (arithmetic, a method the predicate language lacks, a comparison of two
    ///   to-many elements); nothing is dropped silently.
    public init<Root: ModelFields>(_ predicate: Predicate<Root>) throws(StoreChainError) {
        var conversion = PredicateConversion(root: predicate.variable.key)
        self = try conversion.predicate(predicate.expression)
    }
}

/// What one part of a Foundation predicate expression stands for in StoreChain's terms.
enum PredicateTerm {
    /// A key path from the evaluated object (or from an element of a to-many relationship).
    case path(PredicatePath)
    case constant(Value)
    /// A constant sequence, for `IN`.
    case constants([Value])
    /// A constant range, for `BETWEEN` (closed) or `>= … AND < …`.
    case range(low: Value, high: Value, closed: Bool)
    /// `albums.@count`.
    case count(PredicatePath)
    case predicate(FetchPredicate)
    /// A test reached through an optional (`$0.country?.starts(with: "I")`): nil when `guard`
    /// is nil, else the predicate.
    case optionalPredicate(FetchPredicate, guard: PredicatePath)
    /// `path ?? constant`.
    case coalesced(PredicatePath, default: Value)
}

/// A key path in model names.
struct PredicatePath {
    var components: [String]
    /// Whether it starts at the element of a `contains(where:)` or `allSatisfy` test.
    var throughElement = false

    func appending(_ name: String) -> PredicatePath {
        PredicatePath(components: components + [name], throughElement: throughElement)
    }
}

/// The walk over a Foundation predicate's expression tree; each expression kind converts itself
/// (PredicateConversion+Expressions.swift).
struct PredicateConversion {
    /// What each closure variable stands for: the evaluated object, the value behind an optional,
    /// or the element of a to-many relationship.
    private var variables: [PredicateExpressions.VariableID: PredicatePath]
    /// Set while converting the test of a `contains(where:)` or `allSatisfy`.
    private(set) var isQuantifying = false

    init(root: PredicateExpressions.VariableID) {
        variables = [root: PredicatePath(components: [])]
    }

    func path(of variable: PredicateExpressions.VariableID, in expression: Any) throws(StoreChainError)
        -> PredicatePath
    {
        guard let path = variables[variable] else {
            throw Self.unsupported(expression, "it uses a variable from outside the predicate")
        }
        return path
    }

    mutating func bind(_ variable: PredicateExpressions.VariableID, to path: PredicatePath) {
        variables[variable] = path
    }

    /// Converts `expression`; a part that references no variable (a captured value, a
    /// computation over constants) is evaluated once and becomes a constant.
    mutating func term(_ expression: some PredicateExpression) throws(StoreChainError) -> PredicateTerm {
        let failure: StoreChainError
        if let convertible = expression as? any ConvertibleExpression {
            do {
                return try convertible.convert(&self)
            } catch {
                failure = error
            }
        } else {
            failure = Self.unsupported(expression, "the predicate language has no equivalent of it")
        }
        if let value = try? expression.evaluate(PredicateBindings()), let constant = Self.constant(value) {
            return constant
        }
        throw failure
    }

    /// Converts `expression`, which must stand for a test.
    mutating func predicate(_ expression: some PredicateExpression) throws(StoreChainError) -> FetchPredicate {
        switch try term(expression) {
        case .predicate(let predicate): return predicate
        case .constant(.bool(let value)): return value ? .true : .false
        case .path(let path): return try comparison(.path(path), .equal, .constant(.bool(true)), in: expression)
        case .coalesced(let path, .bool(let fallback)):  // `$0.active ?? false`
            return try comparison(
                .coalesced(path, default: .bool(fallback)), .equal, .constant(.bool(true)), in: expression)
        default: throw Self.unsupported(expression, "it is not a test")
        }
    }

    /// A range written in the predicate (`300...500`, `300..<500`), whose bounds must be constants.
    mutating func range(
        _ lower: some PredicateExpression, _ upper: some PredicateExpression, closed: Bool, in expression: Any
    ) throws(StoreChainError) -> PredicateTerm {
        guard case .constant(let low) = try term(lower), case .constant(let high) = try term(upper) else {
            throw Self.unsupported(expression, "a range's bounds must be constants")
        }
        return .range(low: low, high: high, closed: closed)
    }

    /// Converts the test of `contains(where:)` (`ANY`) or `allSatisfy` (`ALL`) over `collection`.
    mutating func quantified(
        _ modifier: Comparison.Modifier, over collection: some PredicateExpression,
        element: PredicateExpressions.VariableID, test: some PredicateExpression, in expression: Any
    ) throws(StoreChainError) -> PredicateTerm {
        guard !isQuantifying else {
            throw Self.unsupported(expression, "a test over a to-many relationship nests inside another")
        }
        guard case .path(let relationship) = try term(collection) else {
            throw Self.unsupported(expression, "it tests the elements of something other than a to-many relationship")
        }
        bind(element, to: PredicatePath(components: relationship.components, throughElement: true))
        isQuantifying = true
        defer { isQuantifying = false }
        let quantified = Self.quantify(try predicate(test), modifier, over: relationship.components)
        guard let quantified else {
            throw Self.unsupported(
                expression,
                "the test must compare a property of the element with a value, in one comparison or in several "
                    + (modifier == .any ? "joined by ||" : "joined by &&")
                    + " (the predicate language has no SUBQUERY, and `ANY a AND ANY b` is not the same test)")
        }
        return .predicate(quantified)
    }

    /// `test` with `modifier` on each comparison, where that means the same: `ANY (a OR b)` is
    /// `ANY a OR ANY b`, and `ALL (a AND b)` is `ALL a AND ALL b`.
    private static func quantify(
        _ test: FetchPredicate, _ modifier: Comparison.Modifier, over relationship: [String]
    ) -> FetchPredicate? {
        switch test {
        case .comparison(var comparison):
            guard comparison.modifier == .direct, case .keyPath(let keyPath) = comparison.lhs,
                keyPath.count > relationship.count, Array(keyPath.prefix(relationship.count)) == relationship
            else { return nil }
            comparison.modifier = modifier
            return .comparison(comparison)
        case .or(let tests) where modifier == .any:
            let quantified = tests.compactMap { quantify($0, modifier, over: relationship) }
            return quantified.count == tests.count ? .or(quantified) : nil
        case .and(let tests) where modifier == .all:
            let quantified = tests.compactMap { quantify($0, modifier, over: relationship) }
            return quantified.count == tests.count ? .and(quantified) : nil
        default:
            return nil
        }
    }

    /// `lhs op rhs`, with the key path on the left.
    func comparison(
        _ lhs: PredicateTerm, _ op: Comparison.Operator, _ rhs: PredicateTerm, options: Comparison.Options = [],
        in expression: Any
    ) throws(StoreChainError) -> FetchPredicate {
        switch (lhs, rhs) {
        case (.path(let path), .constant(let value)):
            return try compare(path, op, .constant(value), options: options, in: expression)
        case (.path(let path), .path(let other)):
            guard !path.throughElement, !other.throughElement else {
                throw Self.unsupported(expression, "it compares two key paths inside a to-many test")
            }
            return .comparison(Comparison(.keyPath(path.components), op, .keyPath(other.components)))
        case (.count(let path), .constant(let value)):
            return .comparison(
                Comparison(.aggregate(.count, collection: path.components, property: []), op, .constant(value)))
        case (.coalesced(let path, let fallback), .constant(let value)):
            return try coalesced(path, fallback, op, value, in: expression)
        case (.constant, .path), (.constant, .count), (.constant, .coalesced):
            guard let flipped = op.flipped else {
                throw Self.unsupported(expression, "the key path must be on the left of \(op.rawValue)")
            }
            return try comparison(rhs, flipped, lhs, in: expression)
        case (.optionalPredicate(let predicate, let guardPath), .constant(.bool(let value))) where op == .equal:
            // Swift: a missing optional is neither `== true` nor `== false`.
            return value ? Self.nonNil(guardPath, and: predicate) : Self.present(guardPath) && !predicate
        default:
            throw Self.unsupported(expression, "it does not compare a key path with a value")
        }
    }

    /// `path op rhs`; a path through a to-many element only inside its test.
    func compare(
        _ path: PredicatePath, _ op: Comparison.Operator, _ rhs: Operand, options: Comparison.Options = [],
        in expression: Any
    ) throws(StoreChainError) -> FetchPredicate {
        if path.throughElement && !isQuantifying {
            throw Self.unsupported(expression, "it reads an element of a to-many relationship outside its test")
        }
        return .comparison(Comparison(.keyPath(path.components), op, rhs, options: options))
    }

    /// `(path ?? fallback) op value`: the path's comparison where it has a value, the fallback's
    /// (decided here, once) where it has none.
    private func coalesced(
        _ path: PredicatePath, _ fallback: Value, _ op: Comparison.Operator, _ value: Value, in expression: Any
    ) throws(StoreChainError) -> FetchPredicate {
        let test = try compare(path, op, .constant(value), in: expression)
        return coalescing(path, try Self.holds(fallback, op, value), test)
    }

    /// The key path a test reads, and the value it stands for where the path has none
    /// (`$0.seconds ?? 0`); `nil` for a term that is neither.
    mutating func testedValue(_ expression: some PredicateExpression) throws(StoreChainError) -> (
        PredicatePath, Value?
    )? {
        switch try term(expression) {
        case .path(let path): (path, nil)
        case .coalesced(let path, let fallback): (path, fallback)
        default: nil
        }
    }

    /// `test` of a value that may be missing: as it is when `fallbackHolds` is `nil` (nothing
    /// stands in), else where the path has no value, whether the value standing in passes.
    func coalescing(_ path: PredicatePath, _ fallbackHolds: Bool?, _ test: FetchPredicate) -> FetchPredicate {
        guard let fallbackHolds else { return test }
        return fallbackHolds ? Self.missing(path) || test : Self.nonNil(path, and: test)
    }

    /// Whether `value op other` holds, for deciding a fallback once.
    static func holds(_ value: Value, _ op: Comparison.Operator, _ other: Value) throws(StoreChainError) -> Bool {
        try ValueTest.make(Comparison(.constant(value), op, .constant(other)), matcher: StringMatcher([]))(value, other)
    }

    /// `path != nil AND predicate`, written as the predicate alone where a missing value already
    /// fails it (an ordering, a string test or equality with a value).
    static func nonNil(_ path: PredicatePath, and predicate: FetchPredicate) -> FetchPredicate {
        if case .comparison(let comparison) = predicate, comparison.op != .notEqual,
            comparison.modifier == .direct, case .keyPath(let keyPath) = comparison.lhs,
            keyPath.starts(with: path.components), !Self.holdsNull(comparison.rhs)
        {
            return predicate
        }
        return present(path) && predicate
    }

    /// `path != nil`.
    static func present(_ path: PredicatePath) -> FetchPredicate {
        .comparison(Comparison(.keyPath(path.components), .notEqual, .constant(.null)))
    }

    /// `path == nil`.
    static func missing(_ path: PredicatePath) -> FetchPredicate {
        .comparison(Comparison(.keyPath(path.components), .equal, .constant(.null)))
    }

    private static func holdsNull(_ operand: Operand) -> Bool {
        switch operand {
        case .constant(let value): value == .null
        case .array(let elements): elements.contains(where: holdsNull)
        default: false
        }
    }

    /// A Swift value as a predicate constant, if it is one.
    static func constant(_ value: Any) -> PredicateTerm? {
        if let value = value as? any StoredValue { return .constant(value.storedValue) }
        if let range = value as? any ConstantRange { return range.term }
        if let sequence = value as? any Sequence, let values = constants(sequence) { return .constants(values) }
        return nil
    }

    private static func constants(_ sequence: some Sequence) -> [Value]? {
        var values: [Value] = []
        for element in sequence {
            guard let value = element as? any StoredValue else { return nil }
            values.append(value.storedValue)
        }
        return values
    }

    static func unsupported(_ expression: Any, _ reason: String) -> StoreChainError {
        StoreChainError(
            .unsupportedPredicate, "#Predicate: \(readable(expression)) cannot be converted: \(reason)",
            suggestion:
                "rewrite that part with the operations the predicate language has (see FetchPredicate.init(_:)), "
                + "or use a FetchPredicate for it")
    }
}

extension PredicateConversion {
    /// `expression` as Foundation describes it, with each key path into a model object named as
    /// the model names it (`\\Album.Fields.year`), not as the runtime prints a computed
    /// property (`\\Fields.<computed 0x… (Optional<Int>)>`).
    static func readable(_ expression: Any) -> String {
        var names: [String: String] = [:]
        collectKeyPathNames(in: expression, into: &names, depth: 0)
        var text = "\(expression)"
        for (printed, name) in names { text = text.replacingOccurrences(of: printed, with: name) }
        return text
    }

    private static func collectKeyPathNames(in value: Any, into names: inout [String: String], depth: Int) {
        guard depth < 32 else { return }
        if let keyPath = value as? AnyKeyPath {
            let root = type(of: keyPath).rootType
            if let fields = root as? any ModelFields.Type, let name = fields.modelName(for: keyPath) {
                names["\(keyPath)"] = "\\\(root).\(name)"
            }
            return
        }
        for child in Mirror(reflecting: value).children {
            collectKeyPathNames(in: child.value, into: &names, depth: depth + 1)
        }
    }
}

extension Comparison.Operator {
    /// The operator with its operands swapped, for orderings and equality.
    var flipped: Self? {
        switch self {
        case .equal, .notEqual: self
        case .less: .greater
        case .lessOrEqual: .greaterOrEqual
        case .greater: .less
        case .greaterOrEqual: .lessOrEqual
        default: nil
        }
    }
}

/// A constant range captured by a predicate (`let decade = 1990...1999`).
protocol ConstantRange {
    var term: PredicateTerm? { get }
}

extension ClosedRange: ConstantRange where Bound: StoredValue {
    var term: PredicateTerm? { .range(low: lowerBound.storedValue, high: upperBound.storedValue, closed: true) }
}

extension Range: ConstantRange where Bound: StoredValue {
    var term: PredicateTerm? { .range(low: lowerBound.storedValue, high: upperBound.storedValue, closed: false) }
}
