/// Distinct elements in the order they were first inserted, with O(1) insert, removal and
/// membership: what an entity's cached IDs need, so that removing one of thousands does not scan
/// them all.
struct InsertionOrderedSet<Element: Hashable> {
    /// Elements in insertion order; `nil` marks a removed one until the next compaction.
    private var slots: [Element?] = []
    private var positions: [Element: Int] = [:]

    var count: Int { positions.count }
    var isEmpty: Bool { positions.isEmpty }

    /// The elements in insertion order.
    var elements: [Element] { slots.compactMap { $0 } }

    func contains(_ element: Element) -> Bool { positions[element] != nil }

    /// Adds `element` at the end unless it is already present; says whether it was added.
    @discardableResult
    mutating func append(_ element: Element) -> Bool {
        guard positions[element] == nil else { return false }
        positions[element] = slots.count
        slots.append(element)
        return true
    }

    mutating func remove(_ element: Element) {
        guard let position = positions.removeValue(forKey: element) else { return }
        slots[position] = nil
        // Compacting when half the slots are empty keeps removal O(1) amortized.
        if slots.count > 16, positions.count * 2 < slots.count { compact() }
    }

    private mutating func compact() {
        slots = slots.filter { $0 != nil }
        for (position, element) in slots.enumerated() {
            if let element { positions[element] = position }
        }
    }
}
