import Foundation
@_spi(Internals) import StoreChain

/// Reads an endpoint's document the way its plan says and maps its records once per object
/// (skipping bad ones when the options say so): the one document an endpoint declared without
/// paging answers, which may yet announce a next page. The pages of a paged listing are read one
/// request each by the chain's pager (`RemoteResponder+Page.swift`), with the page addresses and
/// next-page rules of `ListingReader+Pages.swift`.
struct ListingReader: Sendable {
    let exchange: RemoteExchange
    let mapper: RecordMapper
    let options: RemoteOptions
    /// Who answers, in `ResponseInfo.answeredBy`.
    let name: String

    /// What reading a document produced.
    struct Listing {
        var nodes: [Node] = []
        var embedded: [Node] = []
        var pages = 0
        /// HTTP exchanges: the document and the redirects it took.
        var exchanges = 0
        var skipped = 0
        /// What the exchange said (headers, status, rate limit), as `HTTPMetadata` reads it.
        var last: ResponseInfo?
        var freshness: ResponseFreshness?
        var notModified = false
        /// The document read.
        var document: (url: URL, response: TransportResponse)?
        /// The document announced a next page (it is the first page of a listing that pages).
        var announcesNextPage = false
    }

    /// Reads the first document of a plan's listing and maps its records, conditional on
    /// `validators` when given, and says whether it announces a next page.
    func readDocument(
        _ plan: QueryPlanner.Plan, entity: EntityDescription, ifChangedSince validators: Validators? = nil,
        context: RequestContext
    ) async throws -> Listing {
        var loaded = Listing()
        var seen: Set<ObjectID> = []
        let recordsPath = plan.endpoint.records ?? mapper.options(for: entity.name).records
        // An endpoint declared without paging still pages when it says so (a next link): a
        // response that announces a next page is never the whole answer.
        let paging = plan.endpoint.paging ?? .link
        try Task.checkCancellation()
        let address = try pageAddress(
            .record(0), size: nil, paging: paging, template: plan.template, endpoint: plan.endpoint.request,
            values: plan.values)
        let url = address.url
        let response = try await exchange.send(
            plan.template.method, url, ifChangedSince: validators, context: context,
            accepting: plan.endpoint.single ? [404] : [])
        loaded.pages = 1
        loaded.exchanges = 1 + response.redirects
        let last = HTTPMetadata.info(from: response, answeredBy: name)
        loaded.freshness = last.freshness
        loaded.last = last
        if response.status == 304 {
            loaded.notModified = true
            return loaded
        }
        if response.status == 404 { return loaded }
        loaded.document = (url, response)
        let body = try exchange.json(response, from: url)
        let source = RemoteError.redacted(url)
        let records = try mapper.records(in: body, at: plan.endpoint.single ? nil : recordsPath, source: source)
        try map(
            records, entity: entity, recordsPath: recordsPath, source: source, including: body, into: &loaded,
            seen: &seen)
        let signals = try plan.endpoint.pagingFacts.signals(in: response, body: body, source: source)
        let (next, _) = try following(
            signals, body: body, from: url, paging: paging, start: address.start, size: address.size,
            records: records, recordsPath: recordsPath, endpoint: plan.endpoint.request)
        if next != nil {
            loaded.announcesNextPage = true
        } else if plan.endpoint.paging == nil, !plan.endpoint.single {
            // A next page announced only in the body cannot be followed, and fails.
            try UndeclaredPaging.check(
                body, records: records.count, isWholeListing: true, endpoint: plan.endpoint.request, source: source)
        }
        return loaded
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
