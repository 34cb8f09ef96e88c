/// Validators a cache passes down so a remote terminal can revalidate what it holds
/// (`If-None-Match`, `If-Modified-Since`); "not modified" comes back as
/// `ResponseInfo.notModified`.
public enum ValidatorsKey: RequestContextKey {
    public struct Value: Sendable, Hashable, Codable {
        public var etag: String?
        public var lastModified: String?
        /// For an answer read from several pages: each page's own validators, which a pager
        /// sends with each page (`PageRequest.validators`).
        public var pages: [PageValidator]

        public init(etag: String? = nil, lastModified: String? = nil, pages: [PageValidator] = []) {
            self.etag = etag
            self.lastModified = lastModified
            self.pages = pages
        }

        /// The validators of cached data, if it has any.
        public init?(_ freshness: Freshness) {
            guard freshness.hasValidators else { return nil }
            self.init(etag: freshness.etag, lastModified: freshness.lastModified, pages: freshness.pageValidators)
        }
    }
}
