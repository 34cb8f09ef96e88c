/// Backend behaviour that real APIs have and the demo can switch on, per instance.
public struct DemoQuirks: Sendable, Hashable {
    /// Delay before every answer.
    public var latency: Duration = .zero
    /// Above this many requests per second, answer 429 with `Retry-After`.
    public var rateLimitPerSecond: Int?
    /// Answer every n-th request with a 500 (deterministic, so tests can count on it).
    public var failEvery: Int?
    /// Answer every n-th request with a 429 and `Retry-After: 0` (deterministic, as `failEvery`).
    public var throttleEvery: Int?
    /// Send `ETag` and answer `If-None-Match` with 304.
    public var etags = false
    /// Send `Cache-Control: max-age=` with this many seconds.
    public var maxAgeSeconds: Int?
    /// End every event stream (`GET /v2/events`) after this many events, in the middle of the
    /// next one, as a dropped connection does.
    public var dropEventStreamAfter: Int?

    public init(
        latency: Duration = .zero, rateLimitPerSecond: Int? = nil, failEvery: Int? = nil, throttleEvery: Int? = nil,
        etags: Bool = false, maxAgeSeconds: Int? = nil, dropEventStreamAfter: Int? = nil
    ) {
        self.dropEventStreamAfter = dropEventStreamAfter
        self.latency = latency
        self.rateLimitPerSecond = rateLimitPerSecond
        self.failEvery = failEvery
        self.throttleEvery = throttleEvery
        self.etags = etags
        self.maxAgeSeconds = maxAgeSeconds
    }

    /// All quirks off.
    public static let none = DemoQuirks()
}
