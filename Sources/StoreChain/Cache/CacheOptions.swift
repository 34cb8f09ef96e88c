/// What the memory and disk caches share: expiry, and how long past expiry an answer may still
/// be given when the backend fails.
public struct CacheOptions: Sendable, Hashable {
    public var expiry: CacheExpiry
    /// How long past its expiry a cached answer may stand in when the backend fails with a
    /// transient error (connection, timeout, 5xx, 429); `nil` never serves stale data on error.
    public var staleIfError: Duration?
    /// Requests with the default `.useCache` policy behave as `.staleWhileRevalidate(maxStale:)`
    /// with this much: answered at once from a result at most this far past its expiry, and
    /// refreshed in the background. `nil` (the default) leaves them as they are.
    public var staleWhileRevalidate: Duration?

    public init(
        expiry: CacheExpiry = CacheExpiry(), staleIfError: Duration? = .seconds(86_400),
        staleWhileRevalidate: Duration? = nil
    ) {
        self.expiry = expiry
        self.staleIfError = staleIfError
        self.staleWhileRevalidate = staleWhileRevalidate
    }
}
