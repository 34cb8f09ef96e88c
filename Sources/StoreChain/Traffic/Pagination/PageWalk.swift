/// The pages one fetch reads (in a `PageSequence`), and the answer stitched together from them.
struct PageWalk {
    typealias Page = PageSequence.Page

    private let plan: FetchPlan
    private let model: ObjectModel
    private let context: RequestContext
    /// The validators of the copy a cache above holds, if it holds one.
    private let validators: Validators?
    private var sequence: PageSequence
    private var pages: [Page] { sequence.pages }

    init(
        plan: FetchPlan, model: ObjectModel, options: PaginationOptions, context: RequestContext,
        ifChangedSince validators: Validators?, next: NextResponder
    ) {
        self.plan = plan
        self.model = model
        self.context = context
        self.validators = validators
        var pageFetch = plan.request
        pageFetch.fetchLimit = nil
        pageFetch.fetchOffset = 0
        if case .dictionaries(let properties) = pageFetch.resultType {
            // Pages hold objects: the related objects the properties read (`band` for
            // `band.name`) come with them, so the dictionaries can be made from the pages.
            for property in properties {
                let relationships = property.split(separator: ".").dropLast().joined(separator: ".")
                if !relationships.isEmpty, !pageFetch.relationshipKeyPathsForPrefetching.contains(relationships) {
                    pageFetch.relationshipKeyPathsForPrefetching.append(relationships)
                }
            }
        }
        pageFetch.resultType = .objects
        let entity = plan.entity.name
        sequence = PageSequence(
            reading: "fetching \(plan.request)", options: options, pageSize: options.pageSize(for: entity),
            progress: context[FetchProgressKey.self].map { (entity, $0) },
            sizes: (entity, context.services.listingSizes),
            send: Self.sender(
                of: pageFetch, context: context, next: next,
                evaluation: PageEvaluation(
                    pageFetch: pageFetch, window: (plan.request.fetchOffset, plan.request.fetchLimit), model: model,
                    context: context)))
    }

    /// Sends one page of `fetch` below the pager, in a span of its own when the chain traces,
    /// and applies to it what the backend did not (`evaluation`).
    private static func sender(
        of fetch: FetchRequest, context: RequestContext, next: NextResponder, evaluation: PageEvaluation
    ) -> PageSequence.Send {
        { page in
            let response = try await context.withSpan("storechain.pagination.page") { span in
                span?.attributes["storechain.entity"] = fetch.entity
                span?.attributes["storechain.page"] = page.description
                return try await next(.page(fetch, page), context)
            }
            guard case .objects(let nodes) = try response.fetchResult() else {
                throw StoreChainError(
                    .invalidResponse, "\(response.info.answeredBy) answered a page of \(fetch.entity) without objects",
                    suggestion: "a terminal asked for a page answers with the page's objects")
            }
            return try await evaluation.apply(to: (nodes, response.related, response.info))
        }
    }

    /// How the walk goes on once the first page said what the backend applies.
    private enum Mode {
        /// The backend filters and sorts: read only the pages that cover records up to `end`.
        case window(end: Int)
        /// The backend sorts but some filtering is in memory: read in order until `end` matches.
        case residual(end: Int)
        /// Every page.
        case all
    }

    mutating func run() async throws -> StoreResponse {
        let request = plan.request
        if let recorded = validators?.pages, !recorded.isEmpty, let unchanged = try await revalidate(recorded) {
            return unchanged
        }
        try sequence.reserve(1)
        // Validators of one document go with the first read: a terminal that does not page
        // answers the whole fetch with it (a paged answer never keeps one page's validators).
        let whole = validators.flatMap { $0.pages.isEmpty ? $0.document : nil }
        var first = try await sequence.read(.record(request.fetchOffset), after: nil, validators: whole)
        if first.info.notModified, first.info.page == nil {
            var info = first.info
            info.pagesRead = sequence.pagesRead
            return StoreResponse(.fetched(.objects([])), info: info)
        }
        guard let firstPage = first.info.page else {
            // The terminal does not page: its answer holds every match.
            sequence.add([first])
            return try await finish(offset: request.fetchOffset, windowFull: false)
        }
        // What the backend's listing applied decides what a position in it means. A window is
        // read from its own pages only when the listing's order is the whole order, ties
        // included: where ties come in no known order, the records just outside a window may
        // belong in it.
        let listing = firstPage.listing
        let exact = listing.predicate && listing.sort && listing.tiesInKeyOrder
        if !exact, first.start > 0 {
            try sequence.reserve(1)
            first = try await sequence.read(.record(0), after: nil, validators: nil)
        }
        sequence.add([first])
        // A count's order does not matter: the backend's filter is enough for its total.
        if request.resultType == .count, listing.predicate, let total = try await listingSize() {
            return countAnswer(total: total)
        }
        let mode: Mode =
            switch (request.fetchLimit.map { request.fetchOffset + $0 }, exact, listing.sort) {
            case (let end?, true, _): .window(end: end)
            case (let end?, false, true): .residual(end: end)
            default: .all
            }
        let end: Int? = if case .window(let end) = mode { end } else { nil }
        let walk = self  // the test reads the pages it is given and the plan, not the sequence it reads on
        try await sequence.readOn(inWaves: !isResidual(mode), end: end) { walk.isFull(mode, $0.pages) }
        return try await finish(
            offset: exact ? request.fetchOffset - (pages.first?.start ?? 0) : request.fetchOffset,
            windowFull: isFull(mode, pages))
    }

    /// Sends every page of the cached answer with its validators. When all come back "not
    /// modified", so does the answer; at the first page that changed, `nil`: the walk starts over.
    private mutating func revalidate(_ recorded: [PageValidator]) async throws -> StoreResponse? {
        var last: ResponseInfo?
        var pageFreshness: [ResponseFreshness] = []
        var exchanges = 0
        for validator in recorded {
            try sequence.reserve(1)
            let (_, _, answer) = try await sequence.send(validator.request)
            guard answer.notModified else {
                sequence.restart()
                return nil
            }
            exchanges += answer.exchanges
            last = answer
            if let page = answer.freshness { pageFreshness.append(page) }
        }
        guard var info = last else { return nil }
        info.page = nil
        info.freshness = ResponseFreshness.combining(pageFreshness)
        info.pagesRead = sequence.pagesRead
        info.exchanges = exchanges
        info.pageValidators = recorded
        return StoreResponse(.fetched(.objects([])), info: info)
    }

    /// The validators of every page read, when every page has some and together they cover
    /// the answer: the walk stopped because the window was full, or its last page was short (a
    /// record added at the end changes that page).
    private func pageValidators(windowFull: Bool) -> [PageValidator] {
        guard let last = pages.last?.info.page else { return [] }
        guard windowFull || last.records < last.size || last.records == 0 else { return [] }
        var validators: [PageValidator] = []
        for page in pages {
            guard let own = page.info.freshness?.validators.nonEmpty else { return [] }
            validators.append(PageValidator(position: page.request.position, size: page.request.size, validators: own))
        }
        return validators
    }

    private func isResidual(_ mode: Mode) -> Bool {
        if case .residual = mode { true } else { false }
    }

    /// Whether the pages read so far hold the window.
    private func isFull(_ mode: Mode, _ pages: [Page]) -> Bool {
        switch mode {
        case .window(let end):
            guard let last = pages.last else { return false }
            return last.start + (last.info.page?.records ?? last.nodes.count) >= end
        case .residual(let end):
            guard pages.reduce(0, { $0 + $1.nodes.count }) >= end else { return false }
            return pages.last?.info.page?.listing.tiesInKeyOrder != false || tieGroupClosed(at: end, pages)
        case .all:
            return false
        }
    }

    /// Whether the records read in the backend's order (sorted, ties in no known order) go past
    /// the group of records that sort equal to the `end`th: until they do, a record of that
    /// group not yet read may come before it once ties are broken by key.
    private func tieGroupClosed(at end: Int, _ pages: [Page]) -> Bool {
        let matches = pages.flatMap(\.nodes)
        guard end > 0, end <= matches.count, let last = matches.last else { return true }
        var source: [ObjectID: Node] = [:]
        for page in pages {
            for node in page.related { source[node.id] = node }
            for node in page.nodes { source[node.id] = node }
        }
        return plan.sortValues(of: matches[end - 1], source: source) != plan.sortValues(of: last, source: source)
    }

    /// How many records a listing the backend filters holds, when it says so without being read
    /// whole: its total (`X-Total-Count`), or where its last page starts (`Link: rel="last"` on
    /// a listing by page number or offset) and how many records that page holds.
    private mutating func listingSize() async throws -> Int? {
        if let total = sequence.total { return total }
        guard let lastStart = sequence.lastStart, pages.first?.info.page?.style.isRandomAccess == true else {
            return nil
        }
        if let page = pages.first(where: { $0.start == lastStart }) {
            return lastStart + (page.info.page?.records ?? page.nodes.count)
        }
        try sequence.reserve(1)
        let last = try await sequence.read(.record(lastStart), after: nil, validators: nil)
        // Only a page that starts there and is the last answers; else the walk reads on.
        guard last.start == lastStart, last.info.page?.next == nil else { return nil }
        sequence.add([last])
        return lastStart + (last.info.page?.records ?? last.nodes.count)
    }

    /// The count the backend's total gives without reading the matches.
    /// When the pages read to learn it hold the whole listing (a first page that is also the
    /// last), they come with it as the entity's complete collection, for a cache above to keep.
    private func countAnswer(total: Int) -> StoreResponse {
        var info = answerInfo()
        var related: [Node] = []
        let complete = completeCollections()
        if !complete.isEmpty {
            info.completeCollections = complete
            var seen: Set<ObjectID> = []
            for page in pages {
                for node in page.nodes + page.related where seen.insert(node.id).inserted { related.append(node) }
            }
        }
        return StoreResponse(
            .fetched(.count(plan.request.windowedCount(matching: total))), related: related, info: info)
    }

    /// Applies the request to the pages' objects; `offset` counts from the first page read.
    private func finish(offset: Int, windowFull: Bool) async throws -> StoreResponse {
        var seen: Set<ObjectID> = []
        var nodes: [Node] = []
        var source: [ObjectID: Node] = [:]
        for page in pages {
            for node in page.related { source[node.id] = node }
        }
        for page in pages {
            for node in page.nodes where seen.insert(node.id).inserted {
                nodes.append(node)
                source[node.id] = node
            }
        }
        // Where the backend applied the whole predicate, or the terminal evaluated the rest, the
        // pages hold the matches only: the predicate runs once per record, where it was read
        // (and could not run here where the backend applied it: the related objects a key path
        // such as `album.year` reads were never loaded).
        let matchesOnly = pages.allSatisfy { $0.info.applied.predicate }
        let localPlan = plan.answering(fromOffset: max(0, offset), filtering: !matchesOnly, model: model)
        let local = localPlan.request
        // What the pages left out that evaluating here reads (a terminal that sends records as
        // it stores them), read through the chain.
        // The entities whose every object the pages hold answer key paths into them by
        // themselves (a to-many grouped by its inverse, with no request).
        let complete = completeCollections()
        var whole: [String: [Node]] = [:]
        if !complete.isEmpty {
            var seen: Set<ObjectID> = []
            for page in pages {
                for node in page.nodes + page.related
                where complete.contains(node.id.entity) && seen.insert(node.id).inserted {
                    whole[node.id.entity, default: []].append(node)
                }
            }
        }
        let loader = RelatedLoader(model: model, backend: context.services.backendReads)
        for path in loader.neededPaths(localPlan) {
            try await loader.follow(
                path, from: &nodes, source: &source, whole: whole, context: context, serving: .fetch(plan.request))
        }
        try localPlan.requireLoaded(nodes, source: source)
        let result = localPlan.execute(over: nodes, source: source)
        var related: [Node] = []
        if case .objects(let objects) = result, !local.relationshipKeyPathsForPrefetching.isEmpty {
            related = source.nodes(along: local.relationshipKeyPathsForPrefetching, from: objects)
        }
        var info = answerInfo()
        info.pageValidators = pageValidators(windowFull: windowFull)
        info.completeCollections = complete
        if !info.completeCollections.isEmpty {
            // A cache above stores a complete collection from the nodes the answer holds.
            var known = Set(related.map(\.id))
            if case .objects(let objects) = result { known.formUnion(objects.map(\.id)) }
            for node in source.values
            where info.completeCollections.contains(node.id.entity) && known.insert(node.id).inserted {
                related.append(node)
            }
        }
        return StoreResponse(.fetched(result), related: related, info: info)
    }

    /// The entities whose every object the pages hold: what an unpaged answer said, or the
    /// fetched entity when every page of a listing the backend did not filter was read, from
    /// the first record to the last page, with no gap.
    private func completeCollections() -> Set<String> {
        guard let first = pages.first else { return [] }
        guard first.info.page != nil else { return first.info.completeCollections }
        var expectedStart = 0
        var pastTheEnd = false
        for page in pages {
            guard let info = page.info.page, info.wholeCollection else { return [] }
            // A wave read at once may reach past the last record: empty pages at the end.
            if info.records == 0 {
                pastTheEnd = true
                continue
            }
            guard !pastTheEnd, page.start == expectedStart else { return [] }
            expectedStart = page.start + info.records
        }
        guard pages.last?.info.page?.next == nil else { return [] }
        return [plan.entity.name]
    }

    private func answerInfo() -> ResponseInfo {
        var info = pages.first?.info ?? ResponseInfo(answeredBy: "pagination", origin: .remote)
        if info.page != nil {
            // The answer is as fresh as its least fresh page; the first page's validators are
            // not the answer's (`pageValidators` holds each page's).
            info.freshness = ResponseFreshness.combining(pages.compactMap(\.info.freshness))
        }
        info.page = nil
        info.applied = .all
        info.pagesRead = sequence.pagesRead
        info.exchanges = pages.reduce(0) { $0 + $1.info.exchanges }
        info.skippedRecords = pages.reduce(0) { $0 + $1.info.skippedRecords }
        info.hasMorePages = pages.last?.info.page.map { $0.next != nil }
        return info
    }
}
