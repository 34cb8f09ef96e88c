/// A fetch request checked against the model and compiled: the filter, the order, the window
/// and the result form, ready to run over any set of nodes.
///
/// Every terminal that evaluates requests in memory runs them through a plan, so all of them
/// share one set of semantics (the reference of Docs/Architecture.md, Invariants 1).
public struct FetchPlan: Sendable {
    /// The request the plan answers.
    public private(set) var request: FetchRequest
    /// The entity the request fetches.
    public let entity: EntityDescription
    /// The validated predicate, with constants bound to attribute types.
    @_spi(Internals) public private(set) var predicate: CompiledPredicate?
    private let sortKeys: [SortKey]
    private let keyReader: ValueAccessor.Single
    private let properties: [Property]
    /// The relationship hops whose destination objects evaluating the request reads (its
    /// predicate, sort and chosen properties), for `requireLoaded(_:source:)`.
    package private(set) var readPaths: [[String]]
    /// Every relationship evaluating the request crosses, key path by key path, and which of
    /// them lead to objects it reads (`readPaths` are those).
    package private(set) var hops: [RelationshipHops]

    // Closures are held in structs, not directly in arrays or tuples: an array holds a closure
    // in its most general form, and each call through one copies the node into memory and back.
    private struct SortKey: Sendable {
        let read: ValueAccessor.Single
        let ascending: Bool
        let caseInsensitive: Bool
    }

    private struct Property: Sendable {
        let name: String
        let read: ValueAccessor.Single
    }

    /// Validates `request` against `model`; nothing runs if it is wrong.
    ///
    /// - Throws: `StoreChainError` naming the entity, key path or value at fault.
    public init(_ request: FetchRequest, model: ObjectModel) throws(StoreChainError) {
        self.request = request
        entity = try model.requireEntity(request.entity)
        predicate = try request.predicate.map { predicate throws(StoreChainError) in
            try CompiledPredicate(predicate, entity: request.entity, model: model)
        }
        if let limit = request.fetchLimit, limit < 0 {
            throw StoreChainError(
                .invalidRequest, "fetchLimit is \(limit)", suggestion: "use 0 or more, or nil for no limit")
        }
        if request.fetchOffset < 0 {
            throw StoreChainError(.invalidRequest, "fetchOffset is \(request.fetchOffset)", suggestion: "use 0 or more")
        }
        var sortKeys: [SortKey] = []
        for (index, descriptor) in request.sortDescriptors.enumerated() {
            let path = try Self.resolveToOne(
                descriptor.keyPath, in: entity, model: model, role: "sortDescriptors[\(index)]")
            guard let attribute = path.attribute, attribute.type.isOrdered else {
                throw StoreChainError(
                    .typeMismatch, "cannot sort by '\(descriptor.keyPath)': it is not an attribute with an order",
                    at: .init(path: "sortDescriptors[\(index)]"))
            }
            if descriptor.caseInsensitive && attribute.type != .string {
                throw StoreChainError(
                    .typeMismatch,
                    "case-insensitive sort needs a string, but '\(descriptor.keyPath)' is \(attribute.type.rawValue)",
                    at: .init(path: "sortDescriptors[\(index)]"))
            }
            sortKeys.append(
                SortKey(
                    read: ValueAccessor.single(path), ascending: descriptor.ascending,
                    caseInsensitive: descriptor.caseInsensitive))
        }
        self.sortKeys = sortKeys
        let keyName = entity.key
        keyReader = { node, _ in node.id.key ?? node.attributes[keyName] ?? .null }
        var properties: [Property] = []
        if case .dictionaries(let names) = request.resultType {
            for (index, name) in names.enumerated() {
                let path = try Self.resolveToOne(
                    name, in: entity, model: model, role: "resultType.dictionaries[\(index)]")
                properties.append(Property(name: name, read: ValueAccessor.single(path)))
            }
        }
        self.properties = properties
        hops = Self.hops(of: request, entity: entity, model: model)
        readPaths = Self.readPaths(hops)
        for (index, keyPath) in request.relationshipKeyPathsForPrefetching.enumerated() {
            let components = keyPath.split(separator: ".").map(String.init)
            let resolved = try Self.resolve(
                components, in: entity, model: model, role: "relationshipKeyPathsForPrefetching[\(index)]")
            guard case .relationship = resolved.terminal else {
                throw StoreChainError(
                    .invalidRequest, "'\(keyPath)' is an attribute; only relationships can be prefetched",
                    at: .init(path: "relationshipKeyPathsForPrefetching[\(index)]"))
            }
        }
        model.plans.noteMade()
    }

    /// This plan from another offset, and without its predicate unless `filtering` (what it is
    /// run over holds the matches only: then it reads no related objects for the predicate).
    /// Nothing is checked or compiled again.
    package func answering(fromOffset offset: Int, filtering: Bool, model: ObjectModel) -> FetchPlan {
        var plan = self
        plan.request.fetchOffset = offset
        guard !filtering, plan.predicate != nil else { return plan }
        plan.request.predicate = nil
        plan.predicate = nil
        plan.hops = Self.hops(of: plan.request, entity: entity, model: model)
        plan.readPaths = Self.readPaths(plan.hops)
        return plan
    }

    private static func resolve(_ components: [String], in entity: EntityDescription, model: ObjectModel, role: String)
        throws(StoreChainError) -> ResolvedKeyPath
    {
        do {
            return try ResolvedKeyPath(components, from: entity, in: model)
        } catch {
            throw error.located(.init(path: role))
        }
    }

    private static func resolveToOne(_ keyPath: String, in entity: EntityDescription, model: ObjectModel, role: String)
        throws(StoreChainError) -> ResolvedKeyPath
    {
        let components = keyPath.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
        let resolved = try resolve(components, in: entity, model: model, role: role)
        if resolved.isCollection {
            throw StoreChainError(
                .invalidRequest, "'\(keyPath)' goes through a to-many relationship and has many values",
                at: .init(path: role), suggestion: "use a key path through to-one relationships only")
        }
        return resolved
    }

    /// Runs the plan over `nodes` (the entity's objects); `source` supplies related objects.
    public func execute(over nodes: some Sequence<Node>, source: any NodeSource) -> FetchResult {
        project(select(from: nodes, source: source), source: source)
    }

    /// Puts an already selected window of objects into the request's result form.
    package func project(_ window: [Node], source: any NodeSource) -> FetchResult {
        switch request.resultType {
        case .objects: return .objects(window)
        case .objectIDs: return .objectIDs(window.map(\.id))
        case .count: return .count(window.count)
        case .dictionaries:
            return .dictionaries(
                window.map { node in
                    Dictionary(uniqueKeysWithValues: properties.map { ($0.name, $0.read(node, source)) })
                })
        }
    }

    /// The matching nodes, sorted, within the request's offset and limit.
    package func select(from nodes: some Sequence<Node>, source: any NodeSource) -> [Node] {
        var matches: [Node]
        if let predicate {
            // Only the matches are copied (copying every node and removing the rest retained
            // and released each one that does not match).
            matches = []
            for node in nodes where predicate.evaluate(node, in: source) { matches.append(node) }
        } else {
            matches = Array(nodes)
        }
        sort(&matches, source: source)
        let start = min(request.fetchOffset, matches.count)
        let end = request.fetchLimit.map { min(matches.count, start + $0) } ?? matches.count
        // The whole list is returned as it is: copying it would retain every node once more.
        return start == 0 && end == matches.count ? matches : Array(matches[start..<end])
    }

    /// The values `node` sorts by, in the sort descriptors' order (folded where a descriptor
    /// ignores case), without the key: two nodes with equal values tie.
    package func sortValues(of node: Node, source: any NodeSource) -> [Value] {
        sortKeys.map { key in
            let value = key.read(node, source)
            if key.caseInsensitive, case .string(let text) = value { return .string(text.lowercased()) }
            return value
        }
    }

    /// Sorts by the sort descriptors, then by key so the order is always fully determined (and
    /// objects without a key yet, under temporary IDs, by their IDs).
    private func sort(_ nodes: inout [Node], source: any NodeSource) {
        guard nodes.count > 1 else { return }
        let temporary = nodes.contains { $0.id.isTemporary }
        // One flat array of every node's keys (node by node, the key last), not an array per node.
        let width = sortKeys.count + (temporary ? 2 : 1)
        var flat: [Value] = []
        flat.reserveCapacity(nodes.count * width)
        for node in nodes {
            for key in sortKeys {
                let value = key.read(node, source)
                if key.caseInsensitive, case .string(let text) = value {
                    flat.append(.string(text.lowercased()))
                } else {
                    flat.append(value)
                }
            }
            flat.append(keyReader(node, source))
            if temporary { flat.append(node.id.isTemporary ? .string(node.id.description) : .null) }
        }
        // Compared through a buffer, so a comparison borrows the keys instead of retaining them.
        let order = flat.withUnsafeBufferPointer { keys in
            nodes.indices.sorted { left, right in
                for index in 0..<width {
                    let result = Value.sortCompare(keys[left * width + index], keys[right * width + index])
                    if result != 0 {
                        let ascending = index < sortKeys.count ? sortKeys[index].ascending : true
                        return ascending ? result < 0 : result > 0
                    }
                }
                return false
            }
        }
        Self.permute(&nodes, into: order)
    }

    /// Rearranges `nodes` so that position `i` holds what was at `order[i]`, by swapping along
    /// the permutation's cycles: nodes are moved, not copied (a copy retains and releases each).
    private static func permute(_ nodes: inout [Node], into order: [Int]) {
        var placed = [Bool](repeating: false, count: order.count)
        nodes.withUnsafeMutableBufferPointer { buffer in
            for start in order.indices where !placed[start] {
                var position = start
                while true {
                    placed[position] = true
                    let source = order[position]
                    if source == start { break }
                    buffer.swapAt(position, source)
                    position = source
                }
            }
        }
    }
}
