/// A predicate checked against an entity and compiled into closures, ready to test nodes.
///
/// This is the reference semantics every other evaluation (SQL, remote query parameters) must
/// agree with.
///
/// ```swift
/// let filter = try CompiledPredicate(predicate, entity: "Album", model: model)
/// let recent = albums.filter { filter.evaluate($0, in: store) }
/// ```
@_spi(Internals) public struct CompiledPredicate: Sendable {
    typealias Test = @Sendable (Node, any NodeSource) -> Bool

    /// The predicate after validation, with constants bound to the attribute types.
    public let predicate: FetchPredicate
    private let test: Test

    /// Validates `predicate` for `entity` and compiles it.
    public init(_ predicate: FetchPredicate, entity entityName: String, model: ObjectModel) throws(StoreChainError) {
        let entity = try model.requireEntity(entityName)
        let bound = try PredicateValidator.bind(predicate, entity: entity, model: model)
        self.predicate = bound
        self.test = try Self.compile(bound, entity: entity, model: model)
    }

    /// Whether `node` satisfies the predicate; `source` supplies related objects.
    public func evaluate(_ node: Node, in source: any NodeSource = EmptyNodeSource()) -> Bool {
        test(node, source)
    }

    private static func compile(_ predicate: FetchPredicate, entity: EntityDescription, model: ObjectModel)
        throws(StoreChainError)
        -> Test
    {
        switch predicate {
        case .true: return { _, _ in true }
        case .false: return { _, _ in false }
        case .and(let operands):
            return try compileAll(operands[...], entity: entity, model: model, ifEmpty: true) { first, second in
                { first($0, $1) && second($0, $1) }
            }
        case .or(let operands):
            return try compileAll(operands[...], entity: entity, model: model, ifEmpty: false) { first, second in
                { first($0, $1) || second($0, $1) }
            }
        case .not(let operand):
            let inner = try compile(operand, entity: entity, model: model)
            return { !inner($0, $1) }
        case .comparison(let comparison):
            return try compile(comparison, entity: entity, model: model)
        }
    }

    /// The operands compiled, in order, straight into a balanced tree of closures joined by
    /// `join` (so a long `OR` nests log₂ n calls, not n). Never held in an array: an array
    /// holds a closure in its most general form, and every call through one copied the node
    /// into memory and back (a fifth of a fetch).
    private static func compileAll(
        _ operands: ArraySlice<FetchPredicate>, entity: EntityDescription, model: ObjectModel, ifEmpty: Bool,
        join: (@escaping Test, @escaping Test) -> Test
    ) throws(StoreChainError) -> Test {
        switch operands.count {
        case 0: return { _, _ in ifEmpty }
        case 1: return try compile(operands[operands.startIndex], entity: entity, model: model)
        default:
            let middle = operands.startIndex + operands.count / 2
            let first = try compileAll(operands[..<middle], entity: entity, model: model, ifEmpty: ifEmpty, join: join)
            let second = try compileAll(operands[middle...], entity: entity, model: model, ifEmpty: ifEmpty, join: join)
            return join(first, second)
        }
    }

    private static func compile(_ comparison: Comparison, entity: EntityDescription, model: ObjectModel)
        throws(StoreChainError) -> Test
    {
        let matcher = StringMatcher(comparison.options)
        if let test = try caseInsensitivePrefixTest(comparison, entity: entity, model: model, matcher: matcher) {
            return test
        }
        let valueTest = try ValueTest.make(comparison, matcher: matcher)
        let right = try operand(comparison.rhs, entity: entity, model: model, matcher: matcher)

        if comparison.modifier != .direct, case .keyPath(let components) = comparison.lhs {
            let values = ValueAccessor.many(try ResolvedKeyPath(components, from: entity, in: model))
            let modifier = comparison.modifier
            return { node, source in
                let rhs = right(node, source)
                let all = values(node, source)
                switch modifier {
                case .any: return all.contains { valueTest(matcher.foldValue($0), rhs) }
                case .all: return all.allSatisfy { valueTest(matcher.foldValue($0), rhs) }
                case .none, .direct: return !all.contains { valueTest(matcher.foldValue($0), rhs) }
                }
            }
        }
        let left = try operand(comparison.lhs, entity: entity, model: model, matcher: matcher)
        return { node, source in valueTest(left(node, source), right(node, source)) }
    }

    /// `key BEGINSWITH[c] "ascii"`, the search field's predicate, tested without lowercasing
    /// every value: most values start with ASCII, and then only their first bytes are compared.
    /// `nil` for any other comparison.
    private static func caseInsensitivePrefixTest(
        _ comparison: Comparison, entity: EntityDescription, model: ObjectModel, matcher: StringMatcher
    ) throws(StoreChainError) -> Test? {
        guard comparison.op == .beginsWith, comparison.modifier == .direct, comparison.options == .caseInsensitive,
            case .keyPath(let components) = comparison.lhs, case .constant(.string(let prefix)) = comparison.rhs
        else { return nil }
        let folded = matcher.fold(prefix)
        guard folded.utf8.allSatisfy({ $0 < 0x80 }) else { return nil }
        let read = ValueAccessor.single(try ResolvedKeyPath(components, from: entity, in: model))
        return { node, source in
            guard case .string(let string) = read(node, source) else { return false }
            return matcher.beginsWith(string, lowercasedASCIIPrefix: folded)
        }
    }

    /// Reads one side of a comparison, already folded for the comparison's options.
    private static func operand(
        _ expression: Operand, entity: EntityDescription, model: ObjectModel, matcher: StringMatcher
    )
        throws(StoreChainError) -> ValueAccessor.Single
    {
        let folds = !matcher.options.isEmpty
        switch expression {
        case .constant(let value):
            let folded = matcher.foldValue(value)
            return { _, _ in folded }
        case .array:
            // IN and BETWEEN capture their array when the test is made; nothing to read here.
            return { _, _ in .null }
        case .keyPath(let components):
            let read = ValueAccessor.single(try ResolvedKeyPath(components, from: entity, in: model))
            guard folds else { return read }
            return { node, source in matcher.foldValue(read(node, source)) }
        case .aggregate(let function, let collection, let property):
            return try ValueAccessor.aggregate(
                function, collection: collection, property: property, entity: entity, model: model)
        case .variable(let name):
            throw StoreChainError(.invalidRequest, "variable $\(name) has no value")
        }
    }
}

extension StringMatcher {
    /// Folds string values; leaves other values as they are.
    func foldValue(_ value: Value) -> Value {
        guard !options.isEmpty, case .string(let string) = value else { return value }
        return .string(fold(string))
    }
}
