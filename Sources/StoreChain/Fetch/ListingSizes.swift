/// How large each entity's whole, unfiltered listing is, as far as one chain has learned from
/// the pages it read: the total a page states (`X-Total-Count`), where the last page starts
/// (`Link: rel="last"`), or a listing read to its end. The query engine weighs reading a
/// destination's listing against one request per owner or key with it (`BackendReads`).
package final class ListingSizes: Sendable {
    /// Records in a listing and the page size they were read at.
    package struct Size: Sendable, Hashable {
        /// Records in the whole listing.
        package var records: Int
        /// Records per page.
        package var pageSize: Int

        /// Requests to read the whole listing at `pageSize`.
        package var pages: Int { max(1, (records + pageSize - 1) / max(1, pageSize)) }
    }

    private let sizes = Locked<[String: Size]>([:])
    private let probed = Locked<Set<String>>([])

    /// Nothing learned yet.
    package init() {}

    /// Remembers what a read of `entity`'s unfiltered listing showed.
    package func learn(_ entity: String, records: Int, pageSize: Int) {
        guard records >= 0, pageSize > 0 else { return }
        sizes.withLock { $0[entity] = Size(records: records, pageSize: pageSize) }
    }

    /// Remembers what one page of `entity`'s unfiltered listing (`PageInfo.wholeCollection`),
    /// placed at record `start`, shows: the total it states, else where its last page starts
    /// (that page counted full), else, on the last page, the records up to its end.
    package func learn(_ entity: String, from page: PageInfo, start: Int) {
        guard page.wholeCollection else { return }
        let pageSize = page.size > 0 ? page.size : page.records
        if let total = page.total {
            learn(entity, records: total, pageSize: pageSize)
        } else if let lastStart = page.lastStart {
            learn(entity, records: lastStart + pageSize, pageSize: pageSize)
        } else if page.next == nil, start > 0 || page.records > 0 {
            learn(entity, records: start + page.records, pageSize: pageSize)
        }
    }

    /// Records that `entity`'s listing is being probed (its first page read to learn its size);
    /// `false` when it already was, so that a listing that does not state its size is read
    /// for it once, not once per page of the fetch that needs it.
    package func markProbed(_ entity: String) -> Bool {
        probed.withLock { $0.insert(entity).inserted }
    }

    /// What is known of `entity`'s listing, if anything.
    package func size(of entity: String) -> Size? {
        sizes.withLock { $0[entity] }
    }
}
