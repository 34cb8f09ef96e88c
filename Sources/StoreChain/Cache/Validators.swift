/// What identifies the version of an answer a cache holds (`ETag`, `Last-Modified`), so that a
/// revalidation (`StoreRequest.revalidation`) can ask whether it is still current
/// (`If-None-Match`, `If-Modified-Since`); "not modified" comes back as
/// `ResponseInfo.notModified`.
///
/// The one validator type: a response's (`ResponseFreshness.validators`), cached data's
/// (`Freshness.validators`), a request's (`PageRequest.validators`) and each page's
/// (`PageValidator.validators`).
public struct Validators: Sendable, Hashable, Codable, CustomStringConvertible {
    /// The entity tag (`ETag`) to send as `If-None-Match`.
    public var etag: String?
    /// The `Last-Modified` date, as the backend wrote it, to send as `If-Modified-Since`.
    public var lastModified: String?
    /// For an answer read from several pages: each page's own validators, which a pager
    /// sends with each page (`PageRequest.validators`).
    public var pages: [PageValidator]

    /// Validators with the given entity tag, date and pages' validators.
    public init(etag: String? = nil, lastModified: String? = nil, pages: [PageValidator] = []) {
        self.etag = etag
        self.lastModified = lastModified
        self.pages = pages
    }

    /// Whether there is nothing to revalidate with.
    public var isEmpty: Bool { etag == nil && lastModified == nil && pages.isEmpty }

    /// The validators of one document: these without the pages'.
    var document: Validators { Validators(etag: etag, lastModified: lastModified) }

    /// These, or `nil` when there is nothing to revalidate with.
    var nonEmpty: Validators? { isEmpty ? nil : self }

    /// Each validator `newer` has, the rest from these (RFC 9111 §4.3.4: a "not modified"
    /// answer's validators replace the stored ones it names).
    func updated(by newer: Validators) -> Validators {
        Validators(
            etag: newer.etag ?? etag, lastModified: newer.lastModified ?? lastModified,
            pages: newer.pages.isEmpty ? pages : newer.pages)
    }

    public var description: String {
        var parts: [String] = []
        if let etag { parts.append("etag \(etag)") }
        if let lastModified { parts.append("last-modified \(lastModified)") }
        if !pages.isEmpty { parts.append("\(pages.count) pages") }
        return parts.joined(separator: ", ")
    }
}
