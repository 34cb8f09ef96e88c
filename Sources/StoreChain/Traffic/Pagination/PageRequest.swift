/// Where one backend page is, for a page request (`StoreRequest.page`).
///
/// A terminal that pages answers with the records of that one page that match the fetch's
/// whole predicate, in the backend's order, and describes the page in `ResponseInfo.page`.
public struct PageRequest: Sendable, Hashable, CustomStringConvertible {
    /// Where the page is.
    public enum Position: Sendable, Hashable, Codable {
        /// The page that holds this record (0-based, in the backend's order). Endpoints that
        /// cannot jump (cursors, `Link` headers) answer with their first page instead.
        case record(Int)
        /// A continuation the previous page gave (a cursor, or a `Link` URL).
        case token(String)
    }

    /// Where the page starts.
    public var position: Position
    /// Records per page; `nil` uses the endpoint's own page size.
    public var size: Int?
    /// Validators of the copy a cache holds: the request is conditional (`If-None-Match`), and
    /// an unchanged page comes back `ResponseInfo.notModified` with no records.
    public var validators: Validators?

    /// A page at `position`, of `size` records (the endpoint's own size when `nil`), revalidated
    /// with `validators` when given.
    public init(_ position: Position, size: Int? = nil, validators: Validators? = nil) {
        self.position = position
        self.size = size
        self.validators = validators
    }

    public var description: String {
        let place =
            switch position {
            case .record(let record): "at record \(record)"
            case .token(let token): "after '\(token)'"
            }
        let described = size.map { "\(place) (\($0) a page)" } ?? place
        return validators == nil ? described : described + " if changed"
    }
}

/// The validators one page of an answer came with, so the answer can be revalidated page by page.
public struct PageValidator: Sendable, Hashable, Codable {
    /// Where the page starts.
    public var position: PageRequest.Position
    /// The page's size as it was asked for.
    public var size: Int?
    /// The page's own validators (never pages of their own).
    public var validators: Validators

    /// The validators of the page at `position` of `size` records.
    public init(position: PageRequest.Position, size: Int?, validators: Validators) {
        self.position = position
        self.size = size
        self.validators = validators.document
    }

    /// The conditional request for this page.
    public var request: PageRequest { PageRequest(position, size: size, validators: validators) }

    // Stored flat (`etag`, `lastModified` beside `position`), as cache files have them.
    private enum CodingKeys: String, CodingKey {
        case position, size, etag, lastModified
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        self.init(
            position: try container.decode(PageRequest.Position.self, forKey: .position),
            size: try container.decodeIfPresent(Int.self, forKey: .size),
            validators: Validators(
                etag: try container.decodeIfPresent(String.self, forKey: .etag),
                lastModified: try container.decodeIfPresent(String.self, forKey: .lastModified)))
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(position, forKey: .position)
        try container.encodeIfPresent(size, forKey: .size)
        try container.encodeIfPresent(validators.etag, forKey: .etag)
        try container.encodeIfPresent(validators.lastModified, forKey: .lastModified)
    }
}

/// One page as a terminal read it.
public struct PageInfo: Sendable, Hashable {
    /// How the endpoint pages.
    public enum Style: String, Sendable, Hashable {
        /// `offset=` and `limit=`: pages by record position.
        case offset
        /// `page=`: pages by number.
        case pageNumber = "page-number"
        /// An opaque cursor the previous page gave.
        case cursor
        /// A `Link` header's `rel="next"` URL.
        case link

        /// Pages can be asked for by position, so several can be read at once.
        package var isRandomAccess: Bool { self == .offset || self == .pageNumber }
    }

    /// How the endpoint pages.
    public var style: Style
    /// Records a full page holds.
    public var size: Int
    /// The index of the page's first record in the backend's order.
    public var start: Int
    /// Records on the page before any filter applied in memory.
    public var records: Int
    /// Where the next page is; `nil` on the last page.
    public var next: PageRequest.Position?
    /// What the backend's listing applied of the fetch (pushed to the backend), which decides
    /// what a record's position in it means: with the predicate and the sort applied, ties in key
    /// order, the listing's records are the answer's in its order, so a pager reads a window
    /// from its own pages, and the listing's total is the count. What was done to the records
    /// this page holds is the response's `ResponseInfo.applied` (a terminal may have evaluated
    /// in memory what the backend did not).
    public var listing: ResponseInfo.Applied
    /// Records the backend says the whole listing holds, when it says.
    public var total: Int?
    /// Where the listing's last page starts, when the backend says (a `Link` header's
    /// `rel="last"`), so that a pager reading several pages at once reads none past the end.
    public var lastStart: Int?
    /// The listing is the entity's whole collection (the backend filtered nothing), so a pager
    /// that reads every page has read every object; a terminal that filtered such a page in
    /// memory returns the records it left out in `related`, for the caches above.
    public var wholeCollection: Bool
    /// The backend endpoint the page came from (`GET /albums`), for messages about the listing.
    public var endpoint: String?
    /// A page as read, with what the backend said of the listing.
    public init(
        style: Style, size: Int, start: Int, records: Int, next: PageRequest.Position?,
        listing: ResponseInfo.Applied, total: Int? = nil, lastStart: Int? = nil, wholeCollection: Bool = false,
        endpoint: String? = nil
    ) {
        self.style = style
        self.size = size
        self.start = start
        self.records = records
        self.next = next
        self.listing = listing
        self.total = total
        self.lastStart = lastStart
        self.wholeCollection = wholeCollection
        self.endpoint = endpoint
    }
}

/// How far a multi-page fetch has got.
public struct FetchProgress: Sendable, Hashable {
    /// The entity being fetched.
    public var entity: String
    /// Pages read so far.
    public var pages: Int
    /// Records read so far (before filters applied in memory).
    public var records: Int
    /// Records in the whole listing, when the backend says.
    public var totalRecords: Int?

    /// Progress after `pages` pages and `records` records, of `totalRecords` when known.
    public init(entity: String, pages: Int, records: Int, totalRecords: Int?) {
        self.entity = entity
        self.pages = pages
        self.records = records
        self.totalRecords = totalRecords
    }
}

/// Receives progress of multi-page fetches, so a command-line tool or app can show it.
///
/// ```swift
/// context[FetchProgressKey.self] = { progress in print("\(progress.pages) pages") }
/// ```
public enum FetchProgressKey: RequestContextKey {
    /// A function called after each page.
    public typealias Value = @Sendable (FetchProgress) -> Void
}
