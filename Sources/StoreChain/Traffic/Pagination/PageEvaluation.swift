/// Applies to one page of a fetch what its backend did not: the page keeps the records that match
/// the predicate, in the backend's order, with the related objects that evaluating it, the sort
/// and prefetching read, loaded through the chain by the query engine (`RelatedLoader`, weighed
/// over the pages the walk is expected to read). A page whose terminal applied the predicate
/// (`ResponseInfo.applied`) is taken as it is: the predicate runs once per record, wherever it
/// was read.
struct PageEvaluation {
    /// The fetch each page is read for (no window: the walk reads its pages from the start).
    let pageFetch: FetchRequest
    /// The window the walk answers, for how many pages it is expected to read.
    let window: (offset: Int, limit: Int?)
    let model: ObjectModel
    let context: RequestContext

    typealias Page = (nodes: [Node], related: [Node], info: ResponseInfo)

    func apply(to page: Page) async throws -> Page {
        guard !page.info.applied.predicate, !page.info.notModified, let pageInfo = page.info.page else { return page }
        let plan = try FetchPlan.planned(pageFetch, model: model)
        let loader = RelatedLoader(model: model, backend: context.services.backendReads)
        let paths = loader.neededPaths(plan)
        guard plan.predicate != nil || !paths.isEmpty else { return page }
        var nodes = page.nodes
        var source = Dictionary(page.related.map { ($0.id, $0) }, uniquingKeysWith: { first, _ in first })
        for node in nodes { source[node.id] = node }
        let repeats = pagesLeft(from: pageInfo)
        for path in paths {
            try await loader.follow(
                path, from: &nodes, source: &source, repeats: repeats, context: context, serving: .fetch(pageFetch))
        }
        try plan.requireLoaded(nodes, source: source)
        var leftOut: [Node] = []
        if let predicate = plan.predicate {
            let matches = nodes.filter { predicate.evaluate($0, in: source) }
            if pageInfo.wholeCollection, matches.count < nodes.count {
                // The listing is the entity's whole collection: what does not match goes up too,
                // for a cache above to keep the collection whole.
                let matched = Set(matches.map(\.id))
                leftOut = nodes.filter { !matched.contains($0.id) }
            }
            nodes = matches
        }
        var related = page.related
        var known = Set(related.map(\.id))
        for node in source.nodes(along: paths.map(\.text), from: nodes) + leftOut where known.insert(node.id).inserted {
            related.append(node)
        }
        var info = page.info
        info.applied.predicate = true
        return (nodes, related, info)
    }

    /// The pages the walk is expected to read from this one on, this one included: to the
    /// listing's stated end, or to the end of the window when the backend applies the whole
    /// request (the walk stops there); at least two while a next page is announced.
    private func pagesLeft(from page: PageInfo) -> Int {
        let size = page.size
        guard page.next != nil, size > 0 else { return 1 }
        var end = page.total ?? page.lastStart.map { $0 + size } ?? (page.start + 2 * size)
        if page.listing.predicate, page.listing.sort, let limit = window.limit {
            end = min(end, window.offset + limit)
        }
        return max(1, (end - page.start + size - 1) / size)
    }
}
