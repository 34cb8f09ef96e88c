/// Validators a cache passes down so a remote terminal can revalidate what it holds
/// (`If-None-Match`, `If-Modified-Since`); "not modified" comes back as
/// `ResponseInfo.notModified`.
public enum ValidatorsKey: RequestContextKey {
    public struct Value: Sendable, Hashable {
        public var etag: String?
        public var lastModified: String?

        public init(etag: String? = nil, lastModified: String? = nil) {
            self.etag = etag
            self.lastModified = lastModified
        }

        /// The validators of cached data, if it has any.
        public init?(_ freshness: Freshness) {
            guard freshness.etag != nil || freshness.lastModified != nil else { return nil }
            self.init(etag: freshness.etag, lastModified: freshness.lastModified)
        }
    }
}
