/// A set of nodes, indexed by ID and grouped by entity in insertion order.
public struct Dataset: Sendable, NodeSource {
    private var nodesByID: [ObjectID: Node] = [:]
    private var idsByEntity: [String: [ObjectID]] = [:]

    public init(_ nodes: some Sequence<Node> = []) {
        for node in nodes { upsert(node) }
    }

    public func node(for id: ObjectID) -> Node? {
        nodesByID[id]
    }

    /// The entity's nodes in insertion order.
    public func nodes(of entity: String) -> [Node] {
        (idsByEntity[entity] ?? []).compactMap { nodesByID[$0] }
    }

    /// The IDs of the entity's nodes in insertion order.
    public func ids(of entity: String) -> [ObjectID] {
        idsByEntity[entity] ?? []
    }

    public var count: Int { nodesByID.count }

    /// Inserts the node, or replaces the node with the same ID.
    public mutating func upsert(_ node: Node) {
        if nodesByID.updateValue(node, forKey: node.id) == nil {
            idsByEntity[node.id.entity, default: []].append(node.id)
        }
    }

    /// Removes the node with this ID; returns whether there was one.
    @discardableResult
    public mutating func remove(_ id: ObjectID) -> Bool {
        guard nodesByID.removeValue(forKey: id) != nil else { return false }
        idsByEntity[id.entity]?.removeAll { $0 == id }
        return true
    }
}
