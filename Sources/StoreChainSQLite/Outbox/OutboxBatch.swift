import StoreChain

/// Entries an outbox sends as one request: one entry, or an update followed by the updates
/// after it that change only objects it already changes (coalesced).
struct OutboxBatch: Sendable {
    /// The most entries one request carries.
    static let limit = 20

    private(set) var entries: [OutboxEntry]
    /// What goes to the backend: the entries' changes folded together in order.
    private(set) var changes: SaveChanges

    init(_ first: OutboxEntry) {
        entries = [first]
        changes = first.changes
    }

    var first: OutboxEntry { entries[0] }

    /// Takes in `next` when it can go in the same request without changing the end state or
    /// what the backend could refuse: both only update, `next` changes no object the batch
    /// does not change already, and the batch is not full.
    mutating func absorb(_ next: OutboxEntry) -> Bool {
        let objects = Set(changes.updated.map(\.id))
        guard entries.count < Self.limit, changes.inserted.isEmpty, changes.deleted.isEmpty,
            next.changes.inserted.isEmpty, next.changes.deleted.isEmpty,
            next.changes.updated.allSatisfy({ objects.contains($0.id) })
        else { return false }
        for update in next.changes.updated {
            guard let index = changes.updated.firstIndex(where: { $0.id == update.id }) else { continue }
            changes.updated[index].combine(update)
        }
        entries.append(next)
        changes.idempotencyKey = Self.key(of: entries)
        return true
    }

    /// One entry's own key; for several, a key derived from all of theirs, the same whenever the
    /// same entries are combined again (after a crash), and new for any other combination.
    private static func key(of entries: [OutboxEntry]) -> String? {
        let keys = entries.map { $0.changes.idempotencyKey ?? "\($0.id)" }
        guard entries.count > 1 else { return keys.first }
        // Stable across runs, unlike `Hasher`.
        let digest = Fingerprint.digest(of: keys.joined(separator: "\n"))
        return "\(keys[0])+\(entries.count - 1)-\(String(digest, radix: 16))"
    }
}
