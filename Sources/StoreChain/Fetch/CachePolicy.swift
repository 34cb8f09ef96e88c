/// How a fetch may use caches in the chain.
public enum CachePolicy: Sendable, Hashable {
    /// Answer from a cache when it holds a fresh result; otherwise ask the backend.
    case useCache
    /// Ignore cached results and ask the backend; caches store the answer.
    case reload
    /// Never ask the backend: answer from a cache or fail with a "not cached" error.
    case cacheOnly
    /// Answer at once from a result at most `maxStale` past its expiry, marked stale, and
    /// refresh it in the background.
    case staleWhileRevalidate(maxStale: Duration)
}
