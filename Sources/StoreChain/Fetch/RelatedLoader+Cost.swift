/// What reading an entity's whole, unfiltered listing is expected to cost, and where that
/// figure comes from.
package struct ListingEstimate: Sendable, Hashable {
    package enum Source: String, Sendable {
        /// A listing page this chain read (a total header, `Link: rel="last"`, its end).
        case learned = "known from a page this chain read"
        /// The caches hold the whole collection (fresh or not) and counted it.
        case cached = "counted in the caches' copy"
        /// Its first page was read to find out.
        case probed = "learned by reading its first page"
        /// The endpoint does not page: one document.
        case unpaged = "one document (the endpoint does not page)"
    }

    package var pages: Int
    package var source: Source
}

extension RelatedLoader {
    /// Below this many expected requests, a listing is not weighed at all: reading it instead
    /// saves one request at most, for every record of the collection, and finding out its size
    /// costs one.
    static let listingThreshold = 3

    /// The requests that reading `entity`'s whole listing is expected to take: what the chain
    /// learned from its pages, else one for an endpoint that does not page, else the size of the collection the
    /// caches hold (asked with `.cacheOnly`, so it never goes upstream), else, with `probe`, what
    /// reading its first page through the chain shows (a `Link: rel="last"` or a total). `nil`
    /// when nothing tells, or the terminal says nothing of its backend (`BackendReads`).
    package func listingEstimate(
        of entity: EntityDescription, probe: Bool, context: RequestContext, serving parent: StoreRequest
    ) async throws -> ListingEstimate? {
        guard let backend else { return nil }
        let listingSizes = context.services.listingSizes
        if let size = listingSizes.size(of: entity.name) { return ListingEstimate(pages: size.pages, source: .learned) }
        let paging = try backend.listingPaging(of: entity.name)
        guard paging != .unpaged else { return ListingEstimate(pages: 1, source: .unpaged) }
        if let records = try await cachedCount(of: entity, context: context, serving: parent),
            let pages = Self.pages(records: records, paging: paging)
        {
            return ListingEstimate(pages: pages, source: .cached)
        }
        // One probe per entity and process: a listing that does not state its size is not asked
        // again for every page of the fetch that needs it.
        guard probe, listingSizes.markProbed(entity.name) else { return nil }
        // Exactly one request: the listing's first page, at the endpoint's own page size; its
        // total (or last page) is what it is read for.
        let first = StoreRequest.page(FetchRequest(entity: entity.name), PageRequest(.record(0)))
        let answer = try await context.subrequestThroughChain(first, serving: parent)
        if let page = answer.info.page { listingSizes.learn(entity.name, from: page, start: 0) }
        return listingSizes.size(of: entity.name).map { ListingEstimate(pages: $0.pages, source: .probed) }
    }

    /// Requests to read `records` at the page size a listing is read at when nothing asks for
    /// another; `nil` for a listing whose page size is the backend's secret.
    static func pages(records: Int, paging: ListingPaging) -> Int? {
        switch paging {
        case .pages(let size): max(1, (records + max(1, size) - 1) / max(1, size))
        case .sizeNotStated: nil
        case .unpaged: 1
        }
    }

    /// The requests reading `entity`'s whole listing costs over `repeats` calls: once when a
    /// cache keeps it (the calls after the first find it there), else once per call.
    package func listingCost(
        _ listing: ListingEstimate, of entity: EntityDescription, repeats: Int, context: RequestContext
    )
        -> Int
    {
        context.services.keepsAnswers(of: entity.name) ? listing.pages : listing.pages * repeats
    }

    /// How many objects of `entity` the caches hold as its whole collection, fresh or not.
    private func cachedCount(of entity: EntityDescription, context: RequestContext, serving parent: StoreRequest)
        async throws
        -> Int?
    {
        let count = FetchRequest(entity: entity.name, resultType: .count)
        guard
            case .count(let records)? = try await cachedAnswer(
                count, acceptingStale: true, context: context, serving: parent)
        else { return nil }
        return records
    }
}
