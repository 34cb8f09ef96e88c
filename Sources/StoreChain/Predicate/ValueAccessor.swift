/// Reads the value(s) a resolved key path leads to, compiled once into closures.
enum ValueAccessor {
    typealias Single = @Sendable (Node, any NodeSource) -> Value
    typealias Many = @Sendable (Node, any NodeSource) -> [Value]
    typealias Nodes = @Sendable (Node, any NodeSource) -> [Node]

    /// The value at the end of a key path through to-one relationships only.
    static func single(_ keyPath: ResolvedKeyPath) -> Single {
        let read = terminalReader(keyPath.terminal)
        let names = keyPath.steps.map(\.relationship.name)
        if names.isEmpty { return { node, _ in read(node) } }
        // `band.id`, where `id` is the band's key: read from the relationship's object ID,
        // without loading the band.
        if let last = keyPath.steps.last, keyPath.endsAtRelatedKey {
            let leading = Array(names.dropLast())
            let lastName = last.relationship.name
            return { node, source in
                var current = node
                for name in leading {
                    guard case .toOne(let id?) = current.relationships[name], let next = source.node(for: id) else {
                        return .null
                    }
                    current = next
                }
                guard case .toOne(let id?) = current.relationships[lastName] else { return .null }
                return id.key ?? .null
            }
        }
        return { node, source in
            var current = node
            for name in names {
                guard case .toOne(let id?) = current.relationships[name], let next = source.node(for: id) else {
                    return .null
                }
                current = next
            }
            return read(current)
        }
    }

    /// Every value at the end of a key path that goes through to-many relationships.
    static func many(_ keyPath: ResolvedKeyPath) -> Many {
        let read = terminalReader(keyPath.terminal)
        let walk = nodes(along: keyPath.steps.map(\.relationship.name))
        return { node, source in walk(node, source).map(read) }
    }

    /// The nodes reached by following `names` from a node (fanning out on to-many).
    static func nodes(along names: [String]) -> Nodes {
        { node, source in
            var current = [node]
            for name in names {
                var next: [Node] = []
                for node in current {
                    for id in node.relationships[name]?.objectIDs ?? [] {
                        if let found = source.node(for: id) { next.append(found) }
                    }
                }
                current = next
            }
            return current
        }
    }

    private static func terminalReader(_ terminal: ResolvedKeyPath.Terminal) -> @Sendable (Node) -> Value {
        switch terminal {
        case .attribute(let attribute):
            let name = attribute.name
            return { $0.attributes[name] ?? .null }
        case .relationship(let relationship):
            let name = relationship.name
            return { node in
                guard case .toOne(let id?) = node.relationships[name] else { return .null }
                return id.key ?? .string(id.description)
            }
        }
    }

    /// `albums.@count`, `albums.@sum.price`, …
    static func aggregate(
        _ function: Operand.Aggregate, collection: [String], property: [String], entity: EntityDescription,
        model: ObjectModel
    ) throws(StoreChainError) -> Single {
        let collectionPath = try ResolvedKeyPath(collection, from: entity, in: model)
        guard case .relationship(let relationship) = collectionPath.terminal,
            let destination = model.entity(named: relationship.destination)
        else { throw StoreChainError(.typeMismatch, "aggregate needs a to-many relationship") }
        let names = collectionPath.steps.map(\.relationship.name)
        let walk = nodes(along: names)
        let last = relationship.name
        if function == .count {
            return { node, source in
                let owners = names.isEmpty ? [node] : walk(node, source)
                return .integer(owners.reduce(0) { $0 + ($1.relationships[last]?.objectIDs.count ?? 0) })
            }
        }
        let read = single(try ResolvedKeyPath(property, from: destination, in: model))
        let members = nodes(along: names + [last])
        return { node, source in
            let values = members(node, source).map { read($0, source) }.filter { !$0.isNull }
            return combine(function, values)
        }
    }

    private static func combine(_ function: Operand.Aggregate, _ values: [Value]) -> Value {
        switch function {
        case .count: return .integer(values.count)
        case .sum:
            if values.allSatisfy({ if case .integer = $0 { true } else { false } }) {
                return .integer(
                    values.reduce(0) { total, value in
                        if case .integer(let number) = value { return total &+ number }
                        return total
                    })
            }
            return .double(values.reduce(0) { $0 + ($1.numericValue ?? 0) })
        case .avg:
            guard !values.isEmpty else { return .null }
            return .double(values.reduce(0) { $0 + ($1.numericValue ?? 0) } / Double(values.count))
        case .min:
            return values.min { Value.sortCompare($0, $1) < 0 } ?? .null
        case .max:
            return values.max { Value.sortCompare($0, $1) < 0 } ?? .null
        }
    }
}
