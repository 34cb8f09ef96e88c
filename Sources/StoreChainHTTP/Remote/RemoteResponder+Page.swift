import Foundation
@_spi(Internals) import StoreChain

extension RemoteResponder {
    /// Reads the one page a pager asked for (`StoreRequest.page`): its records that match the
    /// whole predicate, in the backend's order, with the related objects the predicate, sort
    /// and prefetching need, and `ResponseInfo.page` saying where the next page is.
    func fetchPage(
        _ page: PageRequest, paging: Paging, request: FetchRequest, plan: FetchPlan, queryPlan: QueryPlanner.Plan,
        context: RequestContext
    ) async throws -> StoreResponse {
        let address = try pageAddress(
            page.position, size: page.size, paging: paging, template: queryPlan.template,
            endpoint: queryPlan.endpoint.request, values: queryPlan.values)
        let response = try await exchange.send(
            queryPlan.template.method, address.url, ifChangedSince: page.validators, context: context,
            accepting: address.mayBePastTheEnd ? ListingReader.pastTheEnd : [])
        if response.status == 304 {
            // Sent with the page's validators (`PageRequest.validators`): the page is unchanged.
            var info = HTTPMetadata.info(from: response, answeredBy: name, notModified: true)
            info.describe(queryPlan)
            return StoreResponse(.fetched(.objects([])), info: info)
        }
        return try await answerPage(
            response, from: address.url, style: address.style, paging: paging, start: address.start, size: address.size,
            request: request, plan: plan, queryPlan: queryPlan, context: context)
    }

    /// Where one page of a listing is.
    struct PageAddress {
        var url: URL
        var style: PageInfo.Style
        /// The records a page holds as asked (0 for a link, whose pages are as the backend sends).
        var size: Int
        /// The listing's record the page starts at (0 for pages after a continuation).
        var start: Int
        /// Asked for by position after the first page: the backend may answer that it is past
        /// the listing's last (`ListingReader.pastTheEnd`).
        var mayBePastTheEnd: Bool
    }

    /// The page at `position` (of `size` records, the style's own size when `nil`) of a listing
    /// paged as `paging`, whose template's other variables take `values`.
    func pageAddress(
        _ position: PageRequest.Position, size asked: Int?, paging: Paging, template: RequestTemplate,
        endpoint: String, values: [String: String]
    ) throws(StoreChainError) -> PageAddress {
        var values = values
        var link: URL?
        let style: PageInfo.Style
        var size: Int
        var start = 0
        switch (paging, position) {
        case (.pages(let variable, let perPage, let defaultSize, let first), .record(let record)):
            style = .pageNumber
            size = max(1, asked ?? defaultSize)
            start = record / size * size
            values[variable] = String(first + record / size)
            values[perPage] = String(size)
        case (.offset(let offset, let limit, let defaultSize), .record(let record)):
            style = .offset
            size = max(1, asked ?? defaultSize)
            start = record
            values[offset] = String(record)
            values[limit] = String(size)
        case (.cursor(let variable, _, let limit, let defaultSize), let position):
            style = .cursor
            size = limit == nil ? defaultSize : max(1, asked ?? defaultSize)
            if let limit { values[limit] = String(size) }
            if case .token(let cursor) = position { values[variable] = cursor }
        case (.link, let position):
            style = .link
            size = 0
            if case .token(let next) = position { link = try listings.resolve(next, against: options.baseURL) }
        case (.pages, .token(let token)), (.offset, .token(let token)):
            throw StoreChainError(
                .invalidRequest, "'\(endpoint)' pages by position, not by the token '\(token)'",
                suggestion: "ask for a page of an offset or page-number endpoint by record position")
        }
        let url: URL
        if let link { url = link } else { url = try template.url(base: options.baseURL, values: values) }
        return PageAddress(
            url: url, style: style, size: size,
            start: start, mayBePastTheEnd: start > 0 && paging.pagesByPosition)
    }

    /// One page's answer from the backend's response: its records that match the whole
    /// predicate, in the backend's order, with the related objects the predicate, sort and
    /// prefetching need, and `ResponseInfo.page` saying where the next page is.
    func answerPage(
        _ response: TransportResponse, from url: URL, style: PageInfo.Style, paging: Paging, start: Int, size: Int,
        request: FetchRequest, plan: FetchPlan, queryPlan: QueryPlanner.Plan, context: RequestContext
    ) async throws -> StoreResponse {
        var size = size
        // A page past the last (Django REST Framework's 404 for a page number past the end) is
        // an empty last page.
        let pastTheEnd = ListingReader.pastTheEnd.contains(response.status)
        let body = pastTheEnd ? nil : try exchange.json(response, from: url)
        let source = RemoteError.redacted(url)
        let recordsPath = queryPlan.endpoint.records ?? mapper.options(for: plan.entity.name).records
        let records =
            try body.map { body throws(StoreChainError) in
                try mapper.records(in: body, at: recordsPath, source: source)
            } ?? []
        var loaded = ListingReader.Listing()
        var seen: Set<ObjectID> = []
        try listings.map(
            records, entity: plan.entity, recordsPath: recordsPath, source: source, including: body,
            into: &loaded, seen: &seen)
        let signals =
            pastTheEnd
            ? PagingFacts.Signals(nextIsStated: true)
            : try queryPlan.endpoint.pagingFacts.signals(in: response, body: body, source: source)
        let total = signals.total
        let next: PageRequest.Position?
        (next, size) = try following(
            signals, body: body, from: url, paging: paging, start: start, size: size, records: records,
            recordsPath: recordsPath, endpoint: queryPlan.endpoint.request)

        var nodes = loaded.nodes
        var objects = Dictionary(loaded.embedded.map { ($0.id, $0) }, uniquingKeysWith: { first, _ in first })
        for node in nodes { objects[node.id] = node }
        let lastStart = try lastPageStart(in: response, paging: paging, template: queryPlan.template, size: size)
        let wholeCollection = queryPlan.pushed.isEmpty
        if wholeCollection {
            learnListingSize(
                of: plan.entity.name, total: total, lastStart: lastStart, start: start, size: size,
                records: records.count, isLast: next == nil)
        }
        let paths = related.neededKeyPaths(request, entity: plan.entity)
        let repeats = pagesLeft(
            from: start, size: size, total: total, lastStart: lastStart, hasNext: next != nil, request: request,
            exact: queryPlan.filterApplied && queryPlan.orderApplied)
        for path in paths {
            try await related.follow(
                path, from: &nodes, source: &objects, repeats: repeats, context: context, serving: .fetch(request))
        }
        try plan.requireLoaded(nodes, source: objects)
        var leftOut: [Node] = []
        if let predicate = plan.predicate {
            let matches = nodes.filter { predicate.evaluate($0, in: objects) }
            if wholeCollection, matches.count < nodes.count {
                let matched = Set(matches.map(\.id))
                leftOut = nodes.filter { !matched.contains($0.id) }
            }
            nodes = matches
        }
        var info = HTTPMetadata.info(from: response, answeredBy: name)
        info.describe(queryPlan)
        info.skippedRecords = loaded.skipped
        info.applied = .init(
            predicate: queryPlan.filterApplied, sort: queryPlan.orderApplied, window: false,
            tiesInKeyOrder: queryPlan.tiesInKeyOrder)
        info.hasMorePages = next != nil
        info.page = PageInfo(
            style: style, size: size, start: start, records: records.count, next: next, total: total,
            lastStart: lastStart, wholeCollection: wholeCollection, endpoint: queryPlan.endpoint.request)
        let reached = objects.nodes(along: paths.map { $0.joined(separator: ".") }, from: nodes)
        return StoreResponse(.fetched(.objects(nodes)), related: reached + leftOut, info: info)
    }

    /// The pages the walk is expected to read from this one on, this one included: to the
    /// listing's stated end, or to the end of the window when the backend applies the whole
    /// request (the pager stops there); at least two while a next page is announced.
    private func pagesLeft(
        from start: Int, size: Int, total: Int?, lastStart: Int?, hasNext: Bool, request: FetchRequest, exact: Bool
    ) -> Int {
        guard hasNext, size > 0 else { return 1 }
        var end = total ?? lastStart.map { $0 + size } ?? (start + 2 * size)
        if exact, let limit = request.fetchLimit { end = min(end, request.fetchOffset + limit) }
        return max(1, (end - start + size - 1) / size)
    }

    /// Remembers how large an unfiltered listing is, from one of its pages: the total the
    /// backend states, else where its last page starts (counting that page as full), else, on
    /// the last page, the records up to its end.
    private func learnListingSize(
        of entity: String, total: Int?, lastStart: Int?, start: Int, size: Int, records: Int, isLast: Bool
    ) {
        let pageSize = size > 0 ? size : records
        if let total {
            listingSizes.learn(entity, records: total, pageSize: pageSize)
        } else if let lastStart {
            listingSizes.learn(entity, records: lastStart + pageSize, pageSize: pageSize)
        } else if isLast, start > 0 || records > 0 {
            listingSizes.learn(entity, records: start + records, pageSize: pageSize)
        }
    }

    /// Where the last page starts, from a page-number endpoint's `Link: <…page=N…>; rel="last"`
    /// (GitHub's style), when that link asks for pages of this size.
    private func lastPageStart(
        in response: TransportResponse, paging: Paging, template: RequestTemplate, size: Int
    ) throws(StoreChainError) -> Int? {
        guard case .pages(let variable, let perPage, _, let first) = paging,
            let pageName = template.queryName(of: variable),
            let last = try LinkHeader.url(relation: "last", in: response[header: "link"]),
            let items = URLComponents(string: last)?.queryItems,
            let page = items.first(where: { $0.name == pageName })?.value.flatMap({ Int($0) }), page >= first
        else { return nil }
        if let sizeName = template.queryName(of: perPage),
            let linkedSize = items.first(where: { $0.name == sizeName })?.value, Int(linkedSize) != size
        {
            return nil
        }
        return (page - first) * size
    }

    /// Where the page after one of `records` (from `start`, asked of `size`) is, `nil` when it is
    /// the last, and the size its pages are: a backend that caps the limit sends pages as large as
    /// it sends, and a link's pages are as large as the backend makes them. An end guessed from a
    /// short page is checked against what the body says (`UndeclaredPaging.checkGuessedEnd`).
    func following(
        _ signals: PagingFacts.Signals, body: JSONValue?, from url: URL, paging: Paging, start: Int, size: Int,
        records: [JSONValue], recordsPath: String?, endpoint: String
    ) throws(StoreChainError) -> (next: PageRequest.Position?, size: Int) {
        var next: PageRequest.Position?
        var size = size
        if !records.isEmpty, let body {
            switch paging {
            case .pages, .offset:
                if signals.continues(afterRecords: records.count, from: start, size: size) {
                    // A backend that caps the limit: the next page starts after the records received.
                    if case .offset = paging, records.count < size { size = records.count }
                    next = .record(start + size)
                }
            case .cursor(_, let place, let limit, _):
                next = try listings.nextCursor(
                    at: place, in: body, records: records, recordsPath: recordsPath, signals: signals,
                    readBefore: start, size: limit == nil ? nil : size, source: RemoteError.redacted(url)
                ).map { .token($0) }
            case .link:
                // Resolved against this page: a body's link may be relative to it.
                if signals.hasMore != false, let link = signals.next {
                    next = .token(try listings.resolve(link, against: url).absoluteString)
                }
            }
        }
        if paging == .link { size = records.count }
        if next == nil, paging.guessesEnd, !signals.isStated, let body {
            try UndeclaredPaging.checkGuessedEnd(
                body, records: start + records.count, endpoint: endpoint, source: RemoteError.redacted(url))
        }
        return (next, size)
    }
}
