import Foundation
import GRDB
import StoreChain

/// The part of a predicate SQLite can apply, as a `WHERE` condition with bound arguments.
///
/// The condition selects a superset of the matching rows: what cannot be compiled (key paths
/// through relationships other than a to-one's key, `album.id`; `[c]`/`[d]`, LIKE, MATCHES,
/// aggregates, NOT) is left out, and the whole predicate
/// is evaluated in memory on what SQLite returns. Values are always bound parameters, never
/// part of the SQL text.
struct SQLPredicate {
    var sql: String
    var arguments: StatementArguments
    /// The to-one relationships whose targets it compares (`album` for `album.id == 5`): an index
    /// of each serves it (`SQLiteCacheStorage.makeTargetIndexes`).
    var targets: Set<String> = []
    /// Whether every row it selects is found by target (a comparison of a to-one's key, or an
    /// AND holding one), so that an index of those targets finds them all.
    var selectsByTarget = false

    /// Compiles what it can of `predicate` (with constants already bound to attribute types)
    /// over `entity`'s attributes and the keys its to-one relationships lead to (those of
    /// `model`'s entities); `nil` when nothing can be compiled.
    init?(_ predicate: FetchPredicate, entity: EntityDescription, model: ObjectModel? = nil) {
        guard let compiled = Self.compile(predicate, entity: entity, model: model) else { return nil }
        self = compiled
    }

    private init(sql: String, arguments: StatementArguments, targets: Set<String> = []) {
        self.sql = sql
        self.arguments = arguments
        self.targets = targets
    }

    private static func compile(_ predicate: FetchPredicate, entity: EntityDescription, model: ObjectModel?)
        -> SQLPredicate?
    {
        switch predicate {
        case .true, .not: return nil
        case .false: return SQLPredicate(sql: "0", arguments: [])
        case .and(let operands):
            let parts = operands.compactMap { compile($0, entity: entity, model: model) }
            guard !parts.isEmpty else { return nil }
            var joined = join(parts, with: "AND")
            joined.selectsByTarget = parts.contains(where: \.selectsByTarget)
            return joined
        case .or(let operands):
            var parts: [SQLPredicate] = []
            for operand in operands {
                guard let part = compile(operand, entity: entity, model: model) else { return nil }
                parts.append(part)
            }
            return parts.isEmpty ? nil : join(parts, with: "OR")
        case .comparison(let comparison): return compile(comparison, entity: entity, model: model)
        }
    }

    private static func join(_ parts: [SQLPredicate], with connective: String) -> SQLPredicate {
        var arguments = StatementArguments()
        for part in parts { arguments += part.arguments }
        return SQLPredicate(
            sql: parts.map { "(\($0.sql))" }.joined(separator: " \(connective) "), arguments: arguments,
            targets: parts.reduce(into: []) { $0.formUnion($1.targets) })
    }

    private static func compile(_ comparison: Comparison, entity: EntityDescription, model: ObjectModel?)
        -> SQLPredicate?
    {
        guard comparison.modifier == .direct, comparison.options.isEmpty, case .keyPath(let path) = comparison.lhs
        else { return nil }
        if path.count == 2 {
            return compileTarget(comparison, relationship: path[0], key: path[1], entity: entity, model: model)
        }
        guard path.count == 1, let attribute = entity.attribute(named: path[0]) else { return nil }
        let value = "\(AttributeFunction.name)(payload, compressed, raw_size, ?)"
        let name: StatementArguments = [attribute.name]
        switch (comparison.op, comparison.rhs) {
        case (.equal, .constant(.null)): return SQLPredicate(sql: "\(value) IS NULL", arguments: name)
        case (.notEqual, .constant(.null)): return SQLPredicate(sql: "\(value) IS NOT NULL", arguments: name)
        case (.in, .array(let operands)):
            var values: [any DatabaseValueConvertible] = []
            for operand in operands {
                guard case .constant(let constant) = operand, let bound = sqlValue(constant, for: attribute.type)
                else { return nil }
                values.append(bound)
            }
            guard !values.isEmpty else { return SQLPredicate(sql: "0", arguments: []) }
            let marks = Array(repeating: "?", count: values.count).joined(separator: ", ")
            return SQLPredicate(sql: "\(value) IN (\(marks))", arguments: name + StatementArguments(values))
        case (let op, .constant(let constant)):
            guard let bound = sqlValue(constant, for: attribute.type) else { return nil }
            let arguments = name + [bound]
            switch op {
            case .equal: return SQLPredicate(sql: "\(value) = ?", arguments: arguments)
            // `nil != 5` is true in memory, so rows without the value stay in.
            case .notEqual: return SQLPredicate(sql: "\(value) IS NOT ?", arguments: arguments)
            case .less: return SQLPredicate(sql: "\(value) < ?", arguments: arguments)
            case .lessOrEqual: return SQLPredicate(sql: "\(value) <= ?", arguments: arguments)
            case .greater: return SQLPredicate(sql: "\(value) > ?", arguments: arguments)
            case .greaterOrEqual: return SQLPredicate(sql: "\(value) >= ?", arguments: arguments)
            case .beginsWith where attribute.type == .string:
                return SQLPredicate(sql: "instr(\(value), ?) = 1", arguments: arguments)
            case .contains where attribute.type == .string:
                return SQLPredicate(sql: "instr(\(value), ?) > 0", arguments: arguments)
            default: return nil
            }
        default: return nil
        }
    }

    /// `album.id == 5` or `album.id IN {…}`, where `album` is a to-one relationship and `id` its
    /// destination's key: compared with the key the stored relationship leads to.
    private static func compileTarget(
        _ comparison: Comparison, relationship name: String, key: String, entity: EntityDescription,
        model: ObjectModel?
    ) -> SQLPredicate? {
        guard let relationship = entity.relationship(named: name), !relationship.isToMany,
            let destination = model?.entity(named: relationship.destination), destination.key == key,
            let keyType = destination.keyAttribute?.type
        else { return nil }
        let constants: [Operand]
        switch (comparison.op, comparison.rhs) {
        case (.equal, .constant(let value)) where !value.isNull: constants = [comparison.rhs]
        case (.in, .array(let operands)): constants = operands
        default: return nil
        }
        var values: [any DatabaseValueConvertible] = []
        for operand in constants {
            guard case .constant(let constant) = operand, let bound = sqlValue(constant, for: keyType) else {
                return nil
            }
            values.append(bound)
        }
        guard !values.isEmpty else { return SQLPredicate(sql: "0", arguments: []) }
        let marks = Array(repeating: "?", count: values.count).joined(separator: ", ")
        var compiled = SQLPredicate(
            sql: "\(AttributeFunction.targetExpression(name)) IN (\(marks))", arguments: StatementArguments(values),
            targets: [name])
        compiled.selectsByTarget = true
        return compiled
    }

    /// A constant as SQLite compares it with the stored value of an attribute of `type`; `nil`
    /// when the two would not compare the way predicates do.
    static func sqlValue(_ value: Value, for type: AttributeType) -> (any DatabaseValueConvertible)? {
        switch (type, value) {
        case (.string, .string(let text)): text
        case (.integer, .integer(let number)), (.double, .integer(let number)): number
        case (.integer, .double(let number)), (.double, .double(let number)): number.isNaN ? nil : number
        case (.boolean, .bool(let flag)): flag
        case (.date, .date(let date)): date.timeIntervalSince1970
        default: nil
        }
    }

    /// What the attribute function (`AttributeFunction`) reports for a payload it cannot read:
    /// the statement fails with it, and the storage drops the damaged rows
    /// (`SQLiteCacheStorage.nodes(of:matching:)`) instead of letting SQL leave them silently
    /// unmatched.
    static let damagedPayload = "storechain: a damaged node payload"
}
