import Foundation
@_spi(Internals) import StoreChain

/// Reads an endpoint's listing the way its plan says: builds each page's URL (a page number, an
/// offset, a cursor, or the `Link` the last page gave), sends it, maps its records once per
/// object (skipping bad ones when the options say so), and goes on until the listing ends. A
/// listing is read whole or not at all: past `max-pages` it throws, never cuts it short.
struct ListingReader: Sendable {
    let exchange: RemoteExchange
    let mapper: RecordMapper
    let options: RemoteOptions
    /// Who answers, in `ResponseInfo.answeredBy`.
    let name: String

    /// What reading a listing produced.
    struct Listing {
        var nodes: [Node] = []
        var embedded: [Node] = []
        var pages = 0
        /// HTTP exchanges: a page and the redirects it took.
        var exchanges = 0
        var skipped = 0
        /// What the last exchange said (headers, status, rate limit), as `HTTPMetadata` reads it.
        var last: ResponseInfo?
        /// As fresh as the least fresh page read.
        var freshness: ResponseFreshness?
        var notModified = false
        /// The one document the listing was, when it was not paged.
        var document: (url: URL, response: TransportResponse)?
        /// Read with `firstDocumentOnly`: the document announced a next page, which was not read.
        var announcesNextPage = false
    }

    /// Reads a plan's listing and maps the records: every page of it (a responder called
    /// outside a chain, which has no pages to send), or with `firstDocumentOnly` the first
    /// document, saying whether it announced a next page. Only the first exchange is
    /// conditional (`validators`): they are one document's.
    func read(
        _ plan: QueryPlanner.Plan, entity: EntityDescription, ifChangedSince validators: Validators? = nil,
        firstDocumentOnly: Bool = false, context: RequestContext
    ) async throws -> Listing {
        var loaded = Listing()
        var seen: Set<ObjectID> = []
        let recordsPath = plan.endpoint.records ?? mapper.options(for: entity.name).records
        // An endpoint declared without paging still pages when it says so (a next link): a
        // response that announces a next page is never the whole answer.
        let paging = plan.endpoint.paging ?? .link
        var position = PageRequest.Position.record(0)
        var read = 0
        while true {
            try Task.checkCancellation()
            try checkPageCount(loaded.pages, of: plan.endpoint.request)
            let address = try pageAddress(
                position, size: nil, paging: paging, template: plan.template, endpoint: plan.endpoint.request,
                values: plan.values)
            let url = address.url
            let response = try await exchange.send(
                plan.template.method, url, ifChangedSince: loaded.pages == 0 ? validators : nil, context: context,
                accepting: plan.endpoint.single ? [404] : address.mayBePastTheEnd ? Self.pastTheEnd : [])
            loaded.pages += 1
            loaded.exchanges += 1 + response.redirects
            // A page past the last (asked for after a full page): the listing ended before it.
            if address.mayBePastTheEnd, Self.pastTheEnd.contains(response.status) { return loaded }
            var last = HTTPMetadata.info(from: response, answeredBy: name)
            // Past the first page the rules combine without validators: one page's validators
            // are not the whole listing's.
            if let freshness = last.freshness {
                loaded.freshness = loaded.freshness?.combined(with: freshness) ?? freshness
            }
            if loaded.pages > 1 {
                last.http?.headers["etag"] = nil
                last.http?.headers["last-modified"] = nil
            }
            loaded.last = last
            if response.status == 304 {
                loaded.notModified = true
                return loaded
            }
            if response.status == 404 { return loaded }
            loaded.document = loaded.pages == 1 ? (url, response) : nil
            let body = try exchange.json(response, from: url)
            let source = RemoteError.redacted(url)
            let records = try mapper.records(in: body, at: plan.endpoint.single ? nil : recordsPath, source: source)
            try map(
                records, entity: entity, recordsPath: recordsPath, source: source, including: body, into: &loaded,
                seen: &seen)
            let signals = try plan.endpoint.pagingFacts.signals(in: response, body: body, source: source)
            // Pages by position go on from where this one starts; continuations from the records read.
            let (next, _) = try following(
                signals, body: body, from: url, paging: paging,
                start: paging.pagesByPosition ? address.start : read, size: address.size, records: records,
                recordsPath: recordsPath, endpoint: plan.endpoint.request)
            read += records.count
            guard let next else {
                if plan.endpoint.paging == nil, !plan.endpoint.single {
                    // A next page announced only in the body cannot be followed, and fails.
                    try UndeclaredPaging.check(
                        body, records: records.count, isWholeListing: loaded.pages == 1,
                        endpoint: plan.endpoint.request, source: source)
                }
                return loaded
            }
            if firstDocumentOnly, plan.endpoint.paging == nil {
                loaded.announcesNextPage = true
                return loaded
            }
            position = next
        }
    }

    /// The statuses of a page asked for past a listing's last (by position, after a full page): Django REST Framework answers
    /// 404 for a page number past the end, PostgREST 416 for a range.
    static let pastTheEnd: Set<Int> = [404, 416]

    /// Maps one page's records into `loaded`, once per object, and the records included beside
    /// them in `body`; bad records are skipped and counted when the options say so.
    func map(
        _ records: [JSONValue], entity: EntityDescription, recordsPath: String?, source: String,
        including body: JSONValue?, into loaded: inout Listing,
        seen: inout Set<ObjectID>
    ) throws(StoreChainError) {
        if let body { loaded.embedded += try mapper.includedNodes(in: body, source: source) }
        for (index, record) in records.enumerated() {
            do {
                let (node, embedded) = try mapper.node(
                    from: record, entity: entity, jsonPath: "$\(recordsPath.map { ".\($0)" } ?? "")[\(index)]",
                    source: source)
                if seen.insert(node.id).inserted { loaded.nodes.append(node) }
                loaded.embedded += embedded
            } catch {
                guard options.badRecords == .skip, error.code == .badRecord else { throw error }
                loaded.skipped += 1
            }
        }
    }

    /// Throws `too-many-pages` once `pages` pages of one listing have been read and
    /// another is announced: a listing is read whole or not at all, never cut short.
    func checkPageCount(_ pages: Int, of endpoint: String) throws(StoreChainError) {
        guard pages >= options.maxPages else { return }
        throw StoreChainError(
            .tooManyPages, "'\(endpoint)' has more than \(options.maxPages) pages",
            suggestion: "narrow the request, or raise the remote option max-pages")
    }

    /// A `Link` URL, which must stay on the backend's host (credentials go nowhere else).
    func resolve(_ link: String, against url: URL) throws(StoreChainError) -> URL {
        guard let next = URL(string: link, relativeTo: url)?.absoluteURL,
            next.host == options.baseURL.host, next.port == options.baseURL.port, next.scheme == options.baseURL.scheme
        else {
            throw StoreChainError(
                .badRecord, "the next-page link \(link) leads off the backend \(options.baseURL)",
                suggestion: "StoreChain follows page links on the backend's own host only")
        }
        return next
    }
}
