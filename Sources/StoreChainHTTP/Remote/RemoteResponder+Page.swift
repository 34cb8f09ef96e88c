import Foundation
@_spi(Internals) import StoreChain

extension RemoteResponder {
    /// Reads the one page a pager asked for (`StoreRequest.page`): its records in the backend's
    /// order, with the records embedded in them, and `ResponseInfo.page` saying where the next
    /// page is and what the backend applied (the pager applies the rest).
    func fetchPage(
        _ page: PageRequest, paging: Paging, plan: FetchPlan, queryPlan: QueryPlanner.Plan, context: RequestContext
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
        return try answerPage(
            response, from: address.url, style: address.style, paging: paging, start: address.start, size: address.size,
            plan: plan, queryPlan: queryPlan)
    }

    /// One page's answer from the backend's response: its records in the backend's order, with
    /// the records embedded in them, and `ResponseInfo.page` saying where the next page is.
    func answerPage(
        _ response: TransportResponse, from url: URL, style: PageInfo.Style, paging: Paging, start: Int, size: Int,
        plan: FetchPlan, queryPlan: QueryPlanner.Plan
    ) throws -> StoreResponse {
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

        let lastStart = try lastPageStart(in: response, paging: paging, template: queryPlan.template, size: size)
        var info = HTTPMetadata.info(from: response, answeredBy: name)
        info.describe(queryPlan)
        info.skippedRecords = loaded.skipped
        // The backend's listing applied what was pushed (what a position in it means). Its
        // records go up as it sent them: the pager checks the whole predicate on each, so a
        // backend that ignores a filter it was sent is caught, not believed.
        let listing = ResponseInfo.Applied(
            predicate: queryPlan.filterApplied, sort: queryPlan.orderApplied, window: false,
            tiesInKeyOrder: queryPlan.tiesInKeyOrder)
        info.applied = .init(
            predicate: false, sort: listing.sort, window: false, tiesInKeyOrder: listing.tiesInKeyOrder)
        info.hasMorePages = next != nil
        info.page = PageInfo(
            style: style, size: size, start: start, records: records.count, next: next, listing: listing,
            total: total, lastStart: lastStart, wholeCollection: queryPlan.pushed.isEmpty,
            endpoint: queryPlan.endpoint.request)
        return StoreResponse(.fetched(.objects(loaded.nodes)), related: loaded.embedded, info: info)
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
