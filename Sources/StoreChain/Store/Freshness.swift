import Foundation

/// How fresh a node's values are: when they were fetched, when they expire, and the validators
/// a backend gave for revalidating them.
public struct Freshness: Sendable, Hashable, Codable {
    public var fetchedAt: Date?
    public var expiresAt: Date?
    /// An HTTP `ETag`, for `If-None-Match`.
    public var etag: String?
    /// An HTTP `Last-Modified` value, for `If-Modified-Since`.
    public var lastModified: String?

    public init(fetchedAt: Date? = nil, expiresAt: Date? = nil, etag: String? = nil, lastModified: String? = nil) {
        self.fetchedAt = fetchedAt
        self.expiresAt = expiresAt
        self.etag = etag
        self.lastModified = lastModified
    }

    /// Whether the values are still fresh at `now` (no expiry means fresh).
    public func isFresh(at now: Date) -> Bool {
        expiresAt.map { now < $0 } ?? true
    }
}
