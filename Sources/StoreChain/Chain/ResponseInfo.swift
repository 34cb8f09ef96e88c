import Foundation

/// Where an answer came from and what was done to it, so handlers above can finish the job.
///
/// What every answer carries (who answered, from where, staleness, what was applied, the cache
/// status) is held inline. The facts of a backend exchange (headers, status, pages, endpoint,
/// freshness rules, …), which an answer from a cache does not set, are held out of line behind
/// one reference, so a cache hit copies a small value.
public struct ResponseInfo: Sendable, Hashable {
    /// Where the data came from.
    public enum Origin: String, Sendable, Hashable {
        /// A cache in memory, a cache on disk, or the backend itself.
        case memory, disk, remote
        /// A local store that is the terminal (SQLite, in memory, a JSON file).
        case localStore = "local-store"
        /// A save an outbox recorded and will send when the backend can be reached.
        case outbox
    }

    /// What was applied of a fetch request; the rest must be done above it. As a response's
    /// `applied`, what was done to the records it holds; as a page's `PageInfo.listing`, what the
    /// backend's listing applied.
    public struct Applied: Sendable, Hashable {
        /// Whether the predicate was applied in full.
        public var predicate: Bool
        /// Whether the results are in the request's sort order.
        public var sort: Bool
        /// Whether the offset and limit were applied.
        public var window: Bool
        /// Whether records that sort equal come in ascending key order, the tie-break of every
        /// fetch. When not, a window's records at its ends are known only once the whole group
        /// of records that sort equal to them is read.
        public var tiesInKeyOrder: Bool

        /// What was applied of a fetch: the predicate, the sort (and whether its ties are in key
        /// order), the window.
        public init(predicate: Bool, sort: Bool, window: Bool, tiesInKeyOrder: Bool = true) {
            self.predicate = predicate
            self.sort = sort
            self.window = window
            self.tiesInKeyOrder = tiesInKeyOrder
        }

        /// The whole request was applied.
        public static let all = Applied(predicate: true, sort: true, window: true)
        /// Nothing was applied: every record, in no known order.
        public static let nothing = Applied(predicate: false, sort: false, window: false, tiesInKeyOrder: false)
    }

    /// The handler or terminal that answered (its type name).
    public var answeredBy: String
    /// Where the data came from.
    public var origin: Origin
    /// The answer is older than the cache policy normally allows (stale-while-revalidate, or
    /// stale-if-error with `error` set).
    public var isStale: Bool
    /// What was done to the records this answer holds; the rest must be done above it. (For a
    /// page, what the backend's listing applied is `PageInfo.listing`.)
    public var applied: Applied
    /// Whether the backend has more pages than this answer holds, when known.
    public var hasMorePages: Bool?
    /// What the caches did with the request: the status of the cache that answered from what it
    /// holds (`hit`, `stale`, `revalidated`; `answeredBy` names it), else of the closest cache to
    /// the caller (`miss`, `refreshed`, `bypassed`); `nil` when no cache saw it.
    public var cacheStatus: CacheStatus?
    /// The backend said the cached answer is still current (HTTP 304); the result is empty.
    public var notModified: Bool
    /// The exchange's facts; `nil` while every one has its default.
    private var exchange: OutOfLine<ExchangeFacts>?

    /// Exchanges with the backend made to give this answer: its own, and its pages' when it was
    /// stitched from pages. Sub-requests for related objects count on their own responses.
    public var exchanges: Int {
        get { fact(\.exchanges) }
        set { setFact(\.exchanges, newValue) }
    }
    /// Pages read to give this answer, when it was read from a listing.
    public var pagesRead: Int? {
        get { fact(\.pagesRead) }
        set { setFact(\.pagesRead, newValue) }
    }
    /// Records the backend sent that could not be mapped and were left out (each logged).
    public var skippedRecords: Int {
        get { fact(\.skippedRecords) }
        set { setFact(\.skippedRecords, newValue) }
    }
    /// What the backend said of its rate limit with this answer, when it said anything.
    public var rateLimit: RateLimitStatus? {
        get { fact(\.rateLimit) }
        set { setFact(\.rateLimit, newValue) }
    }
    /// How many object faults a batching handler answered with this one exchange.
    public var batchSize: Int? {
        get { fact(\.batchSize) }
        set { setFact(\.batchSize, newValue) }
    }
    /// Facts custom handlers add for the handlers above them (see `ResponseFactKey`).
    public var facts: ResponseFacts {
        get { fact(\.custom) }
        set { setFact(\.custom, newValue) }
    }
    /// What the response says about its own freshness and its validators, read by the terminal
    /// from its protocol (`nil`: it says nothing, and caches use their time to live).
    public var freshness: ResponseFreshness? {
        get { fact(\.freshness) }
        set { setFact(\.freshness, newValue) }
    }
    /// The error that was absorbed to give this (stale) answer, with its code and retry hint.
    public var error: StoreChainError? {
        get { fact(\.error) }
        set { setFact(\.error, newValue) }
    }
    /// Entities whose every object is in this response (result and related), so a cache can
    /// answer any fetch of them: a responder that had to read every object of an entity
    /// anyway (a dump-only endpoint, every page of an unfiltered listing) says so here.
    public var completeCollections: Set<String> {
        get { fact(\.completeCollections) }
        set { setFact(\.completeCollections, newValue) }
    }
    /// The page this answer holds, when it answers a page request (`StoreRequest.page`).
    public var page: PageInfo? {
        get { fact(\.page) }
        set { setFact(\.page, newValue) }
    }
    /// For an answer a pager stitched from pages: every page's validators, when each page had
    /// some and together they cover everything the answer depends on. A cache keeps them with
    /// the answer and revalidates it page by page.
    public var pageValidators: [PageValidator] {
        get { fact(\.pageValidators) }
        set { setFact(\.pageValidators, newValue) }
    }

    /// Who answered, and from where when that is not its name: `memory-cache (memory)`,
    /// `remote`.
    public var answerer: String {
        answeredBy == origin.rawValue ? answeredBy : "\(answeredBy) (\(origin.rawValue))"
    }

    /// Facts about an answer; what is not given has its default (fresh, all applied, no more
    /// pages, no cache status).
    public init(
        answeredBy: String, origin: Origin, isStale: Bool = false, applied: Applied = .all,
        hasMorePages: Bool? = nil, error: StoreChainError? = nil, notModified: Bool = false
    ) {
        self.answeredBy = answeredBy
        self.origin = origin
        self.isStale = isStale
        self.applied = applied
        self.hasMorePages = hasMorePages
        self.notModified = notModified
        if error != nil { self.error = error }
    }

    private func fact<Fact>(_ fact: KeyPath<ExchangeFacts, Fact>) -> Fact {
        (exchange?.value ?? ExchangeFacts.none)[keyPath: fact]
    }

    /// Sets one fact in a new box (the box is shared by copies, so never changed in place); no
    /// box at all while every fact has its default, so equal infos compare equal.
    private mutating func setFact<Fact>(_ fact: WritableKeyPath<ExchangeFacts, Fact>, _ value: Fact) {
        var facts = exchange?.value ?? ExchangeFacts.none
        facts[keyPath: fact] = value
        exchange = facts == ExchangeFacts.none ? nil : OutOfLine(facts)
    }
}

/// The facts of the backend exchanges behind an answer (see `ResponseInfo`).
private struct ExchangeFacts: Sendable, Hashable {
    static let none = ExchangeFacts()

    var exchanges = 0
    var pagesRead: Int?
    var skippedRecords = 0
    var rateLimit: RateLimitStatus?
    var batchSize: Int?
    var custom = ResponseFacts()
    var freshness: ResponseFreshness?
    var error: StoreChainError?
    var completeCollections: Set<String> = []
    var page: PageInfo?
    var pageValidators: [PageValidator] = []
}
