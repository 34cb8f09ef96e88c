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
        let address = try listings.pageAddress(
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
        (next, size) = try listings.following(
            signals, body: body, from: url, paging: paging, start: start, size: size, records: records,
            recordsPath: recordsPath, endpoint: queryPlan.endpoint.request)

        var nodes = loaded.nodes
        var objects = Dictionary(loaded.embedded.map { ($0.id, $0) }, uniquingKeysWith: { first, _ in first })
        for node in nodes { objects[node.id] = node }
        let lastStart = try lastPageStart(in: response, paging: paging, template: queryPlan.template, size: size)
        let wholeCollection = queryPlan.pushed.isEmpty
        let paths = related.neededPaths(plan)
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
        // The backend's listing applied what was pushed; the page's records were then filtered
        // here by the rest of the predicate, so they are matches only, in the listing's order.
        let listing = ResponseInfo.Applied(
            predicate: queryPlan.filterApplied, sort: queryPlan.orderApplied, window: false,
            tiesInKeyOrder: queryPlan.tiesInKeyOrder)
        info.applied = .init(
            predicate: true, sort: listing.sort, window: false, tiesInKeyOrder: listing.tiesInKeyOrder)
        info.hasMorePages = next != nil
        info.page = PageInfo(
            style: style, size: size, start: start, records: records.count, next: next, listing: listing,
            total: total, lastStart: lastStart, wholeCollection: wholeCollection, endpoint: queryPlan.endpoint.request)
        let reached = objects.nodes(along: paths.map(\.text), from: nodes)
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
}
