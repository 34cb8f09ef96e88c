/// Positions of keyed elements in an array that its owner holds: a hash table that stores, per
/// element, its position and 32 bits of its key's hash in one 8-byte bucket.
///
/// The owner keeps the keys (in its elements) and compares them: a lookup passes the key's hash
/// and a closure that says whether the element at a position has the key. A `[Key: Int]` beside
/// the elements held every key a second time (a 100k-object table of `ObjectID`s took 12.6 MB
/// and doubled to 25 MB while growing; this takes 2 MB). Growing and compacting rehash from the
/// stored hash bits, never from the keys.
///
/// Open addressing with linear probing; a removed element leaves a tombstone until the table is
/// rebuilt. At most three quarters of the buckets are in use (live or tombstones).
struct PositionIndex: Sendable {
    /// `hash << 32 | (position + 1)`; `0` is an empty bucket, a low half of all ones a tombstone.
    private var buckets: [UInt64] = []
    /// How many positions the index holds.
    private(set) var count = 0
    private var tombstones = 0

    private static let positionBits: UInt64 = 0xFFFF_FFFF
    private static let tombstone = positionBits

    private var mask: Int { buckets.count - 1 }

    /// The position whose element `matches`, among those stored with this hash.
    func position(hash: Int, where matches: (Int) -> Bool) -> Int? {
        bucket(hash: hash, where: matches).map { Self.position(in: buckets[$0]) }
    }

    /// Adds a position for a key that is not in the index.
    mutating func insert(_ position: Int, hash: Int) {
        precondition(position >= 0 && UInt64(position) < Self.positionBits - 1, "position \(position) out of range")
        if (count + tombstones + 1) * 4 > buckets.count * 3 { rebuild(capacity: Self.capacity(for: count + 1)) }
        let fragment = UInt32(truncatingIfNeeded: hash)
        var index = Int(fragment) & mask
        while buckets[index] & Self.positionBits != 0 && buckets[index] != Self.tombstone {
            index = (index + 1) & mask
        }
        if buckets[index] == Self.tombstone { tombstones -= 1 }
        buckets[index] = UInt64(fragment) << 32 | UInt64(position + 1)
        count += 1
    }

    /// Removes the position whose element `matches`; returns it, or `nil` when none matches.
    mutating func remove(hash: Int, where matches: (Int) -> Bool) -> Int? {
        guard let index = bucket(hash: hash, where: matches) else { return nil }
        let position = Self.position(in: buckets[index])
        buckets[index] = Self.tombstone
        count -= 1
        tombstones += 1
        return position
    }

    /// Moves every position to `newPosition(position)`: after the owner compacts its elements.
    mutating func remapPositions(_ newPosition: (Int) -> Int) {
        rebuild(capacity: buckets.count, moving: newPosition)
    }

    mutating func removeAll() {
        buckets = []
        count = 0
        tombstones = 0
    }

    private func bucket(hash: Int, where matches: (Int) -> Bool) -> Int? {
        guard !buckets.isEmpty else { return nil }
        let fragment = UInt64(UInt32(truncatingIfNeeded: hash))
        var index = Int(fragment) & mask
        while true {
            let bucket = buckets[index]
            if bucket == 0 { return nil }
            if bucket >> 32 == fragment, bucket != Self.tombstone, matches(Self.position(in: bucket)) { return index }
            index = (index + 1) & mask
        }
    }

    /// Places every live position (moved by `newPosition`) into `capacity` empty buckets,
    /// dropping the tombstones.
    private mutating func rebuild(capacity: Int, moving newPosition: (Int) -> Int = { $0 }) {
        let old = buckets
        buckets = Array(repeating: 0, count: capacity)
        tombstones = 0
        for bucket in old where bucket & Self.positionBits != 0 && bucket != Self.tombstone {
            place(bucket >> 32, position: newPosition(Self.position(in: bucket)))
        }
    }

    /// Stores a position in the first empty bucket of its probe sequence (no tombstones exist).
    private mutating func place(_ fragment: UInt64, position: Int) {
        var index = Int(fragment) & mask
        while buckets[index] != 0 { index = (index + 1) & mask }
        buckets[index] = fragment << 32 | UInt64(position + 1)
    }

    private static func position(in bucket: UInt64) -> Int {
        Int(bucket & positionBits) - 1
    }

    /// The smallest power of two, at least 8, that holds `count` within three quarters.
    private static func capacity(for count: Int) -> Int {
        var capacity = 8
        while count * 4 > capacity * 3 { capacity *= 2 }
        return capacity
    }
}
