/// How `PaginationHandler` reads pages.
public struct PaginationOptions: Sendable, Hashable {
    /// Records per page for every entity; `nil` keeps each endpoint's own page size.
    public var pageSize: Int?
    /// Records per page for particular entities, overriding `pageSize`.
    public var pageSizes: [String: Int]
    /// The most pages one fetch may read; a fetch that needs more fails with `too-many-pages`
    /// instead of reading forever.
    public var maxPages: Int
    /// Pages read at once where the endpoint allows it (offsets and page numbers); cursors and
    /// `Link` headers are always read one after another.
    public var concurrency: Int

    /// Options with a page size (the endpoint's own when `nil`), per-entity sizes, the most pages a
    /// walk reads, and how many pages are read at once.
    public init(pageSize: Int? = nil, pageSizes: [String: Int] = [:], maxPages: Int = 1000, concurrency: Int = 4) {
        self.pageSize = pageSize
        self.pageSizes = pageSizes
        self.maxPages = max(1, maxPages)
        self.concurrency = max(1, concurrency)
    }

    /// The page size for `entity`, when the options set one.
    package func pageSize(for entity: String) -> Int? {
        pageSizes[entity] ?? pageSize
    }
}

extension PaginationOptions: Decodable {
    private enum CodingKeys: String, CodingKey {
        case pageSize, pageSizes, maxPages, concurrency
    }

    /// Reads `{ page-size: 50, page-sizes: { Track: 100 }, max-pages: 200, concurrency: 4 }`
    /// (counts of one or more); a key left out keeps the default of `init`.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        let defaults = PaginationOptions()
        self.init(
            pageSize: try container.decodeIfPresent(PositiveCount.self, forKey: .pageSize)?.value ?? defaults.pageSize,
            pageSizes: try container.decodeIfPresent([String: PositiveCount].self, forKey: .pageSizes)?
                .mapValues(\.value) ?? defaults.pageSizes,
            maxPages: try container.decodeIfPresent(PositiveCount.self, forKey: .maxPages)?.value ?? defaults.maxPages,
            concurrency: try container.decodeIfPresent(PositiveCount.self, forKey: .concurrency)?.value
                ?? defaults.concurrency)
    }
}
