/// Nodes by ID in the order they were first added: the nodes of one entity in a `Dataset` or a
/// memory cache. Lookup, insertion and removal are O(1) (removal amortized), and the nodes in
/// order are read straight from their array, without a lookup each.
struct OrderedNodes: Sendable {
    /// A node and a number its owner keeps with it (a memory cache: the node's place in its use
    /// order, so a hit finds both with one lookup); `-1` until set.
    private struct Slot {
        var node: Node
        var tag: Int
    }

    /// The nodes in order; a removed node leaves an empty slot until the next compaction.
    private var slots: [Slot?] = []
    private var index = PositionIndex()

    var count: Int { index.count }
    var isEmpty: Bool { index.count == 0 }

    /// The nodes in the order they were first added.
    var nodes: [Node] { slots.compactMap { $0?.node } }

    /// The IDs in the order they were first added.
    var ids: [ObjectID] { slots.compactMap { $0?.node.id } }

    subscript(id: ObjectID) -> Node? {
        position(of: id, hash: id.hashValue).flatMap { slots[$0]?.node }
    }

    /// The node with this ID and its tag (`-1`: none set), whose `hashValue` the caller has
    /// already worked out.
    func entry(_ id: ObjectID, hash: Int) -> (node: Node, tag: Int)? {
        guard let position = position(of: id, hash: hash), let slot = slots[position] else { return nil }
        return (slot.node, slot.tag)
    }

    /// Adds the node, or replaces the node with its ID in its place, with `tag` (a replaced
    /// node's tag is kept when none is given); returns whether it is new.
    @discardableResult
    mutating func upsert(_ node: Node, tag: Int? = nil) -> Bool {
        let hash = node.id.hashValue
        if let position = position(of: node.id, hash: hash) {
            slots[position] = Slot(node: node, tag: tag ?? slots[position]?.tag ?? -1)
            return false
        }
        index.insert(slots.count, hash: hash)
        slots.append(Slot(node: node, tag: tag ?? -1))
        return true
    }

    /// Removes the node with this ID; returns whether there was one.
    @discardableResult
    mutating func remove(_ id: ObjectID) -> Bool {
        guard let position = index.remove(hash: id.hashValue, where: { slots[$0]?.node.id == id }) else {
            return false
        }
        slots[position] = nil
        // Compacting when half the slots are empty keeps removal O(1) amortized.
        if slots.count > 16, index.count * 2 < slots.count { compact() }
        return true
    }

    private func position(of id: ObjectID, hash: Int) -> Int? {
        index.position(hash: hash) { slots[$0]?.node.id == id }
    }

    private mutating func compact() {
        var newPositions = [Int](repeating: -1, count: slots.count)
        var kept = 0
        for (position, slot) in slots.enumerated() where slot != nil {
            newPositions[position] = kept
            kept += 1
        }
        slots.removeAll { $0 == nil }
        index.remapPositions { newPositions[$0] }
    }
}
