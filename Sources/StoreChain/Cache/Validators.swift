/// What identifies the version of an answer a cache holds (`ETag`, `Last-Modified`), so that a
/// revalidation (`StoreRequest.revalidation`) can ask whether it is still current
/// (`If-None-Match`, `If-Modified-Since`); "not modified" comes back as
/// `ResponseInfo.notModified`.
public struct Validators: Sendable, Hashable, Codable, CustomStringConvertible {
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

    public var description: String {
        var parts: [String] = []
        if let etag { parts.append("etag \(etag)") }
        if let lastModified { parts.append("last-modified \(lastModified)") }
        if !pages.isEmpty { parts.append("\(pages.count) pages") }
        return parts.joined(separator: ", ")
    }
}
