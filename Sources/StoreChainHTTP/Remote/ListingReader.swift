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
        var values = plan.values
        var nextURL: URL?
        var seen: Set<ObjectID> = []
        let recordsPath = plan.endpoint.records ?? mapper.options(for: entity.name).records
        switch plan.endpoint.paging {
        case .pages(let page, let perPage, let size, let first)?:
            values[page] = String(first)
            values[perPage] = String(size)
        case .offset(let offset, let limit, let size)?:
            values[offset] = "0"
            values[limit] = String(size)
        case .cursor(_, _, let limit, let size)?:
            if let limit { values[limit] = String(size) }
        case .link?, nil: break
        }
        let facts = plan.endpoint.pagingFacts
        var start = 0
        while true {
            try Task.checkCancellation()
            try checkPageCount(loaded.pages, of: plan.endpoint.request)
            let url = try nextURL ?? plan.template.url(base: options.baseURL, values: values)
            let pastFirst = loaded.pages > 0 && plan.endpoint.paging?.pagesByPosition == true
            let response = try await exchange.send(
                plan.template.method, url, ifChangedSince: loaded.pages == 0 ? validators : nil, context: context,
                accepting: plan.endpoint.single ? [404] : pastFirst ? Self.pastTheEnd : [])
            loaded.pages += 1
            loaded.exchanges += 1 + response.redirects
            // A page past the last (asked for after a full page): the listing ended before it.
            if pastFirst, Self.pastTheEnd.contains(response.status) { return loaded }
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
            let signals = try facts.signals(in: response, body: body, source: source)
            let before = start
            start += records.count
            switch plan.endpoint.paging {
            case .pages(let page, _, let size, _)?:
                // Count pages even while following links, so a page without a link goes on from
                // the right number (and never re-reads the linked page).
                values[page] = String((Int(values[page] ?? "") ?? 0) + 1)
                guard signals.continues(afterRecords: records.count, from: before, size: size) else {
                    return try ended(
                        loaded, records: start, guessed: !signals.isStated, body: body, plan: plan, source: source)
                }
                nextURL = nil
                if let link = signals.next { nextURL = try resolve(link, against: url) }
            case .offset(let offset, _, let size)?:
                guard signals.continues(afterRecords: records.count, from: before, size: size) else {
                    return try ended(
                        loaded, records: start, guessed: !signals.isStated, body: body, plan: plan, source: source)
                }
                // On from the records received: a backend that caps the limit sends fewer.
                values[offset] = String((Int(values[offset] ?? "") ?? 0) + records.count)
            case .cursor(let variable, let next, let limit, let size)?:
                guard
                    let cursor = try nextCursor(
                        at: next, in: body, records: records, recordsPath: recordsPath, signals: signals,
                        readBefore: before, size: limit == nil ? nil : size, source: source)
                else {
                    return try ended(
                        loaded, records: start, guessed: plan.endpoint.paging?.guessesEnd == true && !signals.isStated,
                        body: body, plan: plan, source: source)
                }
                values[variable] = cursor
            case .link?, nil:
                // An endpoint declared without paging still pages when it says so: a response
                // that announces a next page is never the whole answer. One that says so only in
                // its body cannot be followed, and fails.
                guard let link = signals.next else {
                    if plan.endpoint.paging == nil, !plan.endpoint.single {
                        try UndeclaredPaging.check(
                            body, records: records.count, isWholeListing: loaded.pages == 1,
                            endpoint: plan.endpoint.request, source: source)
                    }
                    return loaded
                }
                if firstDocumentOnly {
                    loaded.announcesNextPage = true
                    return loaded
                }
                nextURL = try resolve(link, against: url)
            }
        }
    }

    /// A listing that ended at `body`'s page; an end guessed from a short page is checked against what the body says (a backend capping the page size).
    private func ended(
        _ loaded: Listing, records: Int, guessed: Bool, body: JSONValue, plan: QueryPlanner.Plan, source: String
    ) throws(StoreChainError) -> Listing {
        if guessed {
            try UndeclaredPaging.checkGuessedEnd(
                body, records: records, endpoint: plan.endpoint.request, source: source)
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

    /// The next page's cursor, from a page of `records` (found at `recordsPath` in `body`, after
    /// `readBefore` records), or `nil` when it is the last: a more-pages flag that is false, an
    /// empty page, no cursor at `place` (missing, null or empty); for a cursor that is the last
    /// record's key, also a stated total reached or, where nothing is stated, a page shorter than
    /// the `size` asked (`Paging.guessesEnd`).
    ///
    /// - Throws: `.badRecord` naming the URL and JSON path when the cursor is neither a string
    ///   nor an integer.
    func nextCursor(
        at place: Paging.CursorPlace, in body: JSONValue, records: [JSONValue], recordsPath: String?,
        signals: PagingFacts.Signals, readBefore: Int, size: Int?, source: String
    ) throws(StoreChainError) -> String? {
        guard signals.hasMore != false, let last = records.last else { return nil }
        let value: JSONValue?
        let path: String
        switch place {
        case .body(let cursorPath):
            value = JSONPath.value(at: cursorPath, in: body)
            path = "$.\(cursorPath)"
        case .lastRecord(let field):
            // Without a limit asked, a page of any size may have a successor.
            guard signals.continues(afterRecords: records.count, from: readBefore, size: size ?? 1) else {
                return nil
            }
            value = JSONPath.value(at: field, in: last)
            path = "$" + (recordsPath.map { ".\($0)" } ?? "") + "[\(records.count - 1)].\(field)"
        }
        switch value {
        case nil, .null?: return nil
        case .string(let cursor)?: return cursor.isEmpty ? nil : cursor
        case .integer(let number)?: return String(number)
        case let other?:
            throw StoreChainError(
                .badRecord, "the next-page cursor is \(other.typeName), not a string or an integer",
                at: .init(file: source, path: path),
                suggestion: "point the endpoint's cursor option at the field that holds the next cursor")
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
