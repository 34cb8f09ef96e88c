/// Keys in order of use, least recent first, each with its size in bytes: O(1) touch, remove
/// and eviction.
///
/// Entries live in an array of slots linked by position, with a `PositionIndex` from key to slot;
/// a removed entry's slot is reused. (Links held as keys, beside a separate table of sizes, took
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
    private var index = PositionIndex()
    private var least = none
    private var most = none

    var count: Int { index.count }

    /// The least recently used key.
    var leastRecent: Key? { least == Self.none ? nil : slots[least].key }

    /// Marks `key` as just used, adding it (with size 0) if new.
    mutating func touch(_ key: Key) {
        use(key, hash: key.hashValue)
    }

    /// Marks `key` as just used, given its `hashValue` (worked out for another lookup already);
    /// returns its position, which stays the key's until it is removed.
    @discardableResult
    mutating func touch(_ key: Key, hash: Int) -> Int {
        assert(hash == key.hashValue, "the hash given is not the key's")
        return use(key, hash: hash)
    }

    /// Marks the key at `position` (from `touch(_:hash:)` or `set(_:size:hash:)`, the key not
    /// removed since) as just used, without looking it up.
    mutating func touch(at position: Int) {
        // A removed key's position is out of range or holds no key; checked in debug builds (a
        // release build's array access still traps out of range).
        assert(slots[position].key != nil, "no key at position \(position)")
        moveToMostRecent(position)
    }

    /// Sets `key`'s size and marks it as just used; returns the size it had (0 if new).
    @discardableResult
    mutating func set(_ key: Key, size: Int) -> Int {
        set(key, size: size, hash: key.hashValue).previousSize
    }

    /// `set(_:size:)` for a key whose `hashValue` the caller has worked out; also returns the
    /// key's position (as `touch(_:hash:)` does).
    mutating func set(_ key: Key, size: Int, hash: Int) -> (position: Int, previousSize: Int) {
        assert(hash == key.hashValue, "the hash given is not the key's")
        let position = use(key, hash: hash)
        defer { slots[position].size = size }
        return (position, slots[position].size)
    }

    /// Removes `key`; returns the size it had (0 if absent).
    @discardableResult
    mutating func remove(_ key: Key) -> Int {
        guard let position = index.remove(hash: key.hashValue, where: { slots[$0].key == key }) else { return 0 }
        unlink(position)
        let size = slots[position].size
        slots[position].key = nil
        freeSlots.append(position)
        return size
    }

    mutating func removeAll() {
        slots.removeAll()
        freeSlots.removeAll()
        index.removeAll()
        least = Self.none
        most = Self.none
    }

    /// Links `key`'s slot in as the most recent, adding it (with size 0) if new; returns its slot.
    @discardableResult
    private mutating func use(_ key: Key, hash: Int) -> Int {
        guard let position = index.position(hash: hash, where: { slots[$0].key == key }) else {
            return add(key, hash: hash)
        }
        moveToMostRecent(position)
        return position
    }

    private mutating func moveToMostRecent(_ position: Int) {
        guard position != most else { return }
        unlink(position)
        append(position)
    }

    private mutating func add(_ key: Key, hash: Int) -> Int {
        let slot = Slot(key: key, size: 0, previous: Self.none, next: Self.none)
        let position: Int
        if let reused = freeSlots.popLast() {
            position = reused
            slots[reused] = slot
        } else {
            position = slots.count
            slots.append(slot)
        }
        index.insert(position, hash: hash)
        append(position)
        return position
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
