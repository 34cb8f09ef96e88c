/// Nodes by ID in the order they were first added: the nodes of one entity in a `Dataset` or a
/// memory cache. Lookup, insertion and removal are O(1) (removal amortized), and the nodes in
/// order are read straight from their array, without a lookup each.
struct OrderedNodes: Sendable {
    /// The nodes in order; a removed node leaves an empty slot until the next compaction.
    private var slots: [Node?] = []
    private var positions: [ObjectID: Int] = [:]

    var count: Int { positions.count }
    var isEmpty: Bool { positions.isEmpty }

    /// The nodes in the order they were first added.
    var nodes: [Node] { slots.compactMap { $0 } }

    /// The IDs in the order they were first added.
    var ids: [ObjectID] { slots.compactMap { $0?.id } }

    subscript(id: ObjectID) -> Node? {
        positions[id].flatMap { slots[$0] }
    }

    /// Adds the node, or replaces the node with its ID in its place; returns whether it is new.
    @discardableResult
    mutating func upsert(_ node: Node) -> Bool {
        if let position = positions[node.id] {
            slots[position] = node
            return false
        }
        positions[node.id] = slots.count
        slots.append(node)
        return true
    }

    /// Removes the node with this ID; returns whether there was one.
    @discardableResult
    mutating func remove(_ id: ObjectID) -> Bool {
        guard let position = positions.removeValue(forKey: id) else { return false }
        slots[position] = nil
        // Compacting when half the slots are empty keeps removal O(1) amortized.
        if slots.count > 16, positions.count * 2 < slots.count { compact() }
        return true
    }

    private mutating func compact() {
        slots = slots.filter { $0 != nil }
        for (position, node) in slots.enumerated() {
            if let node { positions[node.id] = position }
        }
    }
}
