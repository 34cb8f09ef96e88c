/// Keys in order of use, least recent first: O(1) touch, remove and eviction.
struct LRUOrder<Key: Hashable> {
    private struct Link {
        var previous: Key?
        var next: Key?
    }

    private var links: [Key: Link] = [:]
    /// The least recently used key.
    private(set) var leastRecent: Key?
    private var mostRecent: Key?

    var count: Int { links.count }

    /// Marks `key` as just used, adding it if new.
    mutating func touch(_ key: Key) {
        if mostRecent == key { return }
        remove(key)
        links[key] = Link(previous: mostRecent, next: nil)
        if let mostRecent { links[mostRecent]?.next = key }
        mostRecent = key
        if leastRecent == nil { leastRecent = key }
    }

    mutating func remove(_ key: Key) {
        guard let link = links.removeValue(forKey: key) else { return }
        if let previous = link.previous { links[previous]?.next = link.next } else { leastRecent = link.next }
        if let next = link.next { links[next]?.previous = link.previous } else { mostRecent = link.previous }
    }

    mutating func removeAll() {
        links.removeAll()
        leastRecent = nil
        mostRecent = nil
    }
}
