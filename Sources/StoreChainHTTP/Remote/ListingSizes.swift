import StoreChain

/// How large each entity's whole, unfiltered listing is, as far as the remote adapter has
/// learned: from a total header (`X-Total-Count`), a `Link: rel="last"` page number, or a
/// listing read to its end. The planner weighs reading a destination's listing against one
/// request per owner or key with it (see `RelatedLoader.listingEstimate`).
final class ListingSizes: Sendable {
    /// Records in a listing and the page size they were read at.
    struct Size: Sendable, Hashable {
        var records: Int
        var pageSize: Int

        /// Requests to read the whole listing at `pageSize`.
        var pages: Int { max(1, (records + pageSize - 1) / max(1, pageSize)) }
    }

    private let sizes = Locked<[String: Size]>([:])
    private let probed = Locked<Set<String>>([])

    /// Remembers what a read of `entity`'s unfiltered listing showed.
    func learn(_ entity: String, records: Int, pageSize: Int) {
        guard records >= 0, pageSize > 0 else { return }
        sizes.withLock { $0[entity] = Size(records: records, pageSize: pageSize) }
    }

    /// Records that `entity`'s listing is being probed (its first page read to learn its size);
    /// `false` when it already was, so that a listing that does not state its size is read
    /// for it once, not once per page of the fetch that needs it.
    func markProbed(_ entity: String) -> Bool {
        probed.withLock { $0.insert(entity).inserted }
    }

    /// What is known of `entity`'s listing, if anything.
    func size(of entity: String) -> Size? {
        sizes.withLock { $0[entity] }
    }
}
