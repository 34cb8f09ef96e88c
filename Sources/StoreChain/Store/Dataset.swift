/// A set of nodes, indexed by ID and grouped by entity in insertion order.
///
/// Each entity's nodes are held once, in order, with an index of their positions (a dictionary
/// of nodes by ID beside a list of IDs held every ID twice, and every node was a lookup away
/// from its entity's order). An entity is found by comparing names: a model has a few entities,
/// and comparing a short name costs less than hashing it.
package struct Dataset: Sendable, NodeSource {
    /// The entities it holds nodes of, in the order first inserted.
    package private(set) var entityNames: [String] = []
    private var nodesByEntity: [OrderedNodes] = []
    /// How many nodes the dataset holds.
    package private(set) var count = 0
    /// The highest integer key of a node removed, by entity: a new object never gets the key of
    /// one deleted before it (as SQLite's `AUTOINCREMENT` or a PostgreSQL sequence), or a client
    /// that still knows the deleted one would take the new one for it.
    package private(set) var highestRemovedIntegerKeys: [String: Int] = [:]

    package init(_ nodes: some Sequence<Node> = []) {
        for node in nodes { upsert(node) }
    }

    package func node(for id: ObjectID) -> Node? {
        position(of: id.entity).flatMap { nodesByEntity[$0][id] }
    }

    /// The node with this ID and the tag its owner keeps with it (`OrderedNodes.entry`), whose
    /// `hashValue` the caller has already worked out (to use it again).
    func entry(_ id: ObjectID, hash: Int) -> (node: Node, tag: Int)? {
        position(of: id.entity).flatMap { nodesByEntity[$0].entry(id, hash: hash) }
    }

    /// Every node, entity by entity in the model's order.
    package func allNodes(model: ObjectModel) -> [Node] {
        model.entities.flatMap { nodes(of: $0.name) }
    }

    /// The entity's nodes in insertion order.
    package func nodes(of entity: String) -> [Node] {
        position(of: entity).map { nodesByEntity[$0].nodes } ?? []
    }

    /// The IDs of the entity's nodes in insertion order.
    package func ids(of entity: String) -> [ObjectID] {
        position(of: entity).map { nodesByEntity[$0].ids } ?? []
    }

    /// Inserts the node, or replaces the node with the same ID in its place, with the tag its
    /// owner keeps with it (a replaced node's is kept when none is given).
    package mutating func upsert(_ node: Node, tag: Int? = nil) {
        let position =
            position(of: node.id.entity)
            ?? {
                entityNames.append(node.id.entity)
                nodesByEntity.append(OrderedNodes())
                return entityNames.count - 1
            }()
        if nodesByEntity[position].upsert(node, tag: tag) { count += 1 }
    }

    /// Removes the node with this ID; returns whether there was one.
    @discardableResult
    package mutating func remove(_ id: ObjectID) -> Bool {
        guard let position = position(of: id.entity), nodesByEntity[position].remove(id) else { return false }
        count -= 1
        if case .integer(let key)? = id.key { noteRemoved(key, of: id.entity) }
        return true
    }

    /// Remembers that `entity`'s object with integer key `key` was removed, so no new object gets
    /// it (a store that keeps its data in a file says so again when it opens it).
    package mutating func noteRemoved(_ key: Int, of entity: String) {
        if key > highestRemovedIntegerKeys[entity, default: .min] { highestRemovedIntegerKeys[entity] = key }
    }

    private func position(of entity: String) -> Int? {
        entityNames.firstIndex(of: entity)
    }
}
