import StoreChain

/// What the HTTP exchange behind an answer said, for callers that want to look (the remote
/// responder sets it as `ResponseInfo.http`). The chain decides nothing from it: freshness and
/// validators are in `ResponseInfo.freshness`, rate limits in `rateLimit`, errors in their codes.
public struct HTTPExchange: Sendable, Hashable {
    /// The status of the exchange.
    public var status: Int
    /// The response headers worth passing up, by lower-case name (`etag`, `cache-control`,
    /// `link`, `x-ratelimit-remaining`, …).
    public var headers: [String: String]
    /// The backend request that answered, as its template (`GET /bands/search?q={name}`).
    public var endpoint: String?
    /// The part of the fetch's predicate the backend applied, when any.
    public var pushedPredicate: FetchPredicate?

    /// An exchange's facts: the status, headers, the endpoint that answered and what it applied.
    public init(
        status: Int, headers: [String: String] = [:], endpoint: String? = nil, pushedPredicate: FetchPredicate? = nil
    ) {
        self.status = status
        self.headers = headers
        self.endpoint = endpoint
        self.pushedPredicate = pushedPredicate
    }

    enum Key: ResponseFactKey { typealias Value = HTTPExchange }
}

extension ResponseInfo {
    /// The HTTP exchange behind this answer, when the remote responder gave it (for an answer
    /// stitched from pages, the first page's).
    public var http: HTTPExchange? {
        get { facts[HTTPExchange.Key.self] }
        set { facts[HTTPExchange.Key.self] = newValue }
    }
}
