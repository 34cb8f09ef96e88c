/// The answer to a `StoreRequest`, with what the chain learned on the way.
public struct StoreResponse: Sendable, Hashable {
    public enum Result: Sendable, Hashable {
        case fetched(FetchResult)
        /// The object's node, or `nil` when it no longer exists.
        case object(Node?)
        case relationship(RelationshipValue)
        case saved(SaveResult)
    }

    public var result: Result
    /// Other objects learned while answering: prefetched relationships, the destinations of a
    /// relationship fault, embedded objects.
    public var related: [Node]
    public var info: ResponseInfo

    public init(_ result: Result, related: [Node] = [], info: ResponseInfo) {
        self.result = result
        self.related = related
        self.info = info
    }

    /// The fetch result, or an error saying the response answered something else.
    public func fetchResult() throws(StoreChainError) -> FetchResult {
        guard case .fetched(let result) = result else { throw mismatch("a fetch result") }
        return result
    }

    public func objectNode() throws(StoreChainError) -> Node? {
        guard case .object(let node) = result else { throw mismatch("an object") }
        return node
    }

    public func relationshipValue() throws(StoreChainError) -> RelationshipValue {
        guard case .relationship(let value) = result else { throw mismatch("a relationship value") }
        return value
    }

    public func saveResult() throws(StoreChainError) -> SaveResult {
        guard case .saved(let result) = result else { throw mismatch("a save result") }
        return result
    }

    private func mismatch(_ expected: String) -> StoreChainError {
        StoreChainError(
            .invalidResponse, "'\(info.answeredBy)' answered with \(result.kindDescription), not \(expected)",
            suggestion: "a handler must answer each request with the matching kind of response")
    }
}

extension StoreResponse.Result {
    var kindDescription: String {
        switch self {
        case .fetched: "a fetch result"
        case .object: "an object"
        case .relationship: "a relationship value"
        case .saved: "a save result"
        }
    }
}

/// What a cache did with a request.
public enum CacheStatus: String, Sendable, Hashable, CaseIterable {
    /// Answered from fresh cached data.
    case hit
    /// Not cached (or the policy said reload): forwarded, and the answer stored.
    case miss
    /// Answered from stale data (cache-only, stale-while-revalidate, stale-if-error).
    case stale
    /// Stale data the backend confirmed unchanged ("not modified").
    case revalidated
    /// Stale data replaced by the backend's new answer.
    case refreshed
    /// Not looked up (the `reload` policy, or a request the cache cannot keep): forwarded, and
    /// the answer stored when it can be.
    case bypassed
}

/// Where an answer came from and what was done to it, so handlers above can finish the job.
public struct ResponseInfo: Sendable, Hashable {
    /// Where the data came from.
    public enum Origin: String, Sendable, Hashable {
        case memory, disk, remote
        case localStore = "local-store"
    }

    /// What a terminal applied of a fetch request; the rest must be done above it.
    public struct Applied: Sendable, Hashable {
        public var predicate: Bool
        public var sort: Bool
        public var window: Bool

        public init(predicate: Bool, sort: Bool, window: Bool) {
            self.predicate = predicate
            self.sort = sort
            self.window = window
        }

        /// The whole request was applied.
        public static let all = Applied(predicate: true, sort: true, window: true)
    }

    /// The handler or terminal that answered (its type name).
    public var answeredBy: String
    public var origin: Origin
    /// The answer is older than the cache policy normally allows (stale-while-revalidate, or
    /// stale-if-error with `error` set).
    public var isStale: Bool
    public var applied: Applied
    /// Whether the backend has more pages than this answer holds, when known.
    public var hasMorePages: Bool?
    /// The backend's response headers worth passing up (lower-cased names: `etag`,
    /// `cache-control`, `x-ratelimit-remaining`, …), of the last exchange made for this answer.
    public var headers: [String: String]
    /// The HTTP status of the last exchange made for this answer, when there was one.
    public var httpStatus: Int?
    /// Exchanges with the backend made to give this answer: its own, and its pages' when it was
    /// stitched from pages. Sub-requests for related objects count on their own responses.
    public var exchanges = 0
    /// Pages read to give this answer, when it was read from a listing.
    public var pagesRead: Int?
    /// The backend request that answered (`GET /bands/search?q={name}`), when a remote did.
    public var endpoint: String?
    /// The part of the fetch's predicate the backend applied, when any.
    public var pushedPredicate: FetchPredicate?
    /// Records the backend sent that could not be mapped and were left out (each logged).
    public var skippedRecords = 0
    /// What the backend said of its rate limit with this answer, when it said anything.
    public var rateLimit: RateLimitStatus?
    /// How many object faults a batching handler answered with this one exchange.
    public var batchSize: Int?
    /// Facts custom handlers add for the handlers above them (see `ResponseFactKey`).
    public var facts = ResponseFacts()
    /// What the closest cache to the caller did with the request; `nil` when no cache saw it.
    public var cacheStatus: CacheStatus?
    /// What the response says about its own freshness and its validators, read by the terminal
    /// from its protocol (`nil`: it says nothing, and caches use their time to live).
    public var freshness: ResponseFreshness? {
        get { storedFreshness?.value }
        set { storedFreshness = newValue.map { OutOfLine($0) } }
    }
    /// Out of line, so that copying a response on a cache hit stays cheap.
    private var storedFreshness: OutOfLine<ResponseFreshness>?
    /// An error that was absorbed to give this (stale) answer.
    public var error: String?
    /// The backend said the cached answer is still current (HTTP 304); the result is empty.
    public var notModified: Bool
    /// Entities whose every object is in this response (result and related), so a cache can
    /// answer any fetch of them: a responder that had to read every object of an entity
    /// anyway (a dump-only endpoint, every page of an unfiltered listing) says so here.
    public var completeCollections: Set<String> = []
    /// The page this answer holds, when it answers a page request (`StoreRequest.page`).
    public var page: PageInfo?
    /// For an answer a pager stitched from pages: every page's validators, when each page had
    /// some and together they cover everything the answer depends on. A cache keeps them with
    /// the answer and revalidates it page by page.
    public var pageValidators: [PageValidator] = []

    /// Who answered, and from where when that is not its name: `memory-cache (memory)`,
    /// `remote`.
    public var answerer: String {
        answeredBy == origin.rawValue ? answeredBy : "\(answeredBy) (\(origin.rawValue))"
    }

    public init(
        answeredBy: String, origin: Origin, isStale: Bool = false, applied: Applied = .all,
        hasMorePages: Bool? = nil, headers: [String: String] = [:], error: String? = nil, notModified: Bool = false
    ) {
        self.answeredBy = answeredBy
        self.origin = origin
        self.isStale = isStale
        self.applied = applied
        self.hasMorePages = hasMorePages
        self.headers = headers
        self.error = error
        self.notModified = notModified
    }
}

/// A typed key for a fact a custom handler adds to `ResponseInfo.facts`.
///
/// ```swift
/// enum ShardKey: ResponseFactKey { typealias Value = String }
/// response.info.facts[ShardKey.self] = "eu-1"
/// ```
public protocol ResponseFactKey {
    associatedtype Value: Sendable & Hashable
}

/// Facts custom handlers add to a response, by typed key.
public struct ResponseFacts: Sendable, Hashable {
    private var values: [ObjectIdentifier: any Sendable & Hashable] = [:]

    public init() {}

    public subscript<Key: ResponseFactKey>(key: Key.Type) -> Key.Value? {
        get { values[ObjectIdentifier(key)] as? Key.Value }
        set { values[ObjectIdentifier(key)] = newValue }
    }

    public static func == (lhs: ResponseFacts, rhs: ResponseFacts) -> Bool {
        lhs.values.count == rhs.values.count
            && lhs.values.allSatisfy { key, value in
                rhs.values[key].map { AnyHashable(value) == AnyHashable($0) } ?? false
            }
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(values.count)
    }
}
