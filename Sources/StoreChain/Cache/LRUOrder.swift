/// Keys in order of use, least recent first, each with its size in bytes: O(1) touch, remove
/// and eviction.
///
/// Entries live in an array of slots linked by position, with one index from key to slot; a
/// removed entry's slot is reused. (Links held as keys, beside a separate table of sizes, took
/// three hash tables' entries per cached object.)
struct LRUOrder<Key: Hashable> {
    private struct Slot {
        var key: Key?
        var size: Int
        var previous: Int
        var next: Int
    }

    private static var none: Int { -1 }

    private var slots: [Slot] = []
    private var freeSlots: [Int] = []
    private var positions: [Key: Int] = [:]
    private var least = none
    private var most = none

    var count: Int { positions.count }

    /// The least recently used key.
    var leastRecent: Key? { least == Self.none ? nil : slots[least].key }

    /// Marks `key` as just used, adding it (with size 0) if new.
    mutating func touch(_ key: Key) {
        guard let position = positions[key] else {
            add(key, size: 0)
            return
        }
        guard position != most else { return }
        unlink(position)
        append(position)
    }

    /// Sets `key`'s size and marks it as just used; returns the size it had (0 if new).
    @discardableResult
    mutating func set(_ key: Key, size: Int) -> Int {
        touch(key)
        guard let position = positions[key] else { return 0 }
        defer { slots[position].size = size }
        return slots[position].size
    }

    /// Removes `key`; returns the size it had (0 if absent).
    @discardableResult
    mutating func remove(_ key: Key) -> Int {
        guard let position = positions.removeValue(forKey: key) else { return 0 }
        unlink(position)
        let size = slots[position].size
        slots[position].key = nil
        freeSlots.append(position)
        return size
    }

    mutating func removeAll() {
        slots.removeAll()
        freeSlots.removeAll()
        positions.removeAll()
        least = Self.none
        most = Self.none
    }

    private mutating func add(_ key: Key, size: Int) {
        let slot = Slot(key: key, size: size, previous: Self.none, next: Self.none)
        let position: Int
        if let reused = freeSlots.popLast() {
            position = reused
            slots[reused] = slot
        } else {
            position = slots.count
            slots.append(slot)
        }
        positions[key] = position
        append(position)
    }

    /// Links the slot in as the most recent.
    private mutating func append(_ position: Int) {
        slots[position].previous = most
        slots[position].next = Self.none
        if most != Self.none { slots[most].next = position } else { least = position }
        most = position
    }

    private mutating func unlink(_ position: Int) {
        let previous = slots[position].previous
        let next = slots[position].next
        if previous != Self.none { slots[previous].next = next } else { least = next }
        if next != Self.none { slots[next].previous = previous } else { most = previous }
    }
}
