/// The pages one fetch reads, and the answer stitched together from them.
struct PageWalk {
    /// One page's answer, placed in the backend's order.
    struct Page: Sendable {
        /// What was asked for.
        var request: PageRequest
        var start: Int
        var nodes: [Node]
        var related: [Node]
        var info: ResponseInfo
    }

    private let plan: FetchPlan
    private let model: ObjectModel
    private let options: PaginationOptions
    private let context: RequestContext
    private let next: NextResponder
    private let pageFetch: FetchRequest
    /// The validators of the copy a cache above holds, if it holds one.
    private let validators: Validators?
    private var pages: [Page] = []
    private var pagesRead = 0
    private var recordsRead = 0
    private var total: Int?
    private var lastStart: Int?

    init(
        plan: FetchPlan, model: ObjectModel, options: PaginationOptions, context: RequestContext,
        ifChangedSince validators: Validators?, next: NextResponder
    ) {
        self.plan = plan
        self.model = model
        self.options = options
        self.validators = validators
        self.context = context
        self.next = next
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
        self.pageFetch = pageFetch
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
        try reserve(1)
        // Validators of one document go with the first read: a terminal that does not page
        // answers the whole fetch with it (a paged answer never keeps one page's validators).
        let whole = validators.flatMap { $0.pages.isEmpty ? $0.document : nil }
        var first = try await read(.record(request.fetchOffset), after: nil, validators: whole)
        if first.info.notModified, first.info.page == nil {
            return StoreResponse(.fetched(.objects([])), info: first.info)
        }
        guard first.info.page != nil else {
            // The terminal does not page: its answer holds every match.
            pages = [first]
            return try finish(offset: request.fetchOffset, windowFull: false)
        }
        let applied = first.info.applied
        // A window is read from its own pages only when the backend's order is the whole order,
        // ties included: where ties come in no known order, the records just outside a window
        // may belong in it.
        let exact = applied.predicate && applied.sort && applied.tiesInKeyOrder
        if !exact, first.start > 0 {
            try reserve(1)
            first = try await read(.record(0), after: nil, validators: nil)
        }
        add([first])
        // A count's order does not matter: the backend's filter is enough for its total.
        if request.resultType == .count, applied.predicate, let total = try await listingSize() {
            return countAnswer(total: total)
        }
        let mode: Mode =
            switch (request.fetchLimit.map { request.fetchOffset + $0 }, exact, applied.sort) {
            case (let end?, true, _): .window(end: end)
            case (let end?, false, true): .residual(end: end)
            default: .all
            }
        while let last = pages.last, let position = last.info.page?.next, !isFull(mode) {
            // A listing read by continuation ends where its stated total is reached.
            if case .token = position, let total, last.start + (last.info.page?.records ?? last.nodes.count) >= total {
                break
            }
            if case .record(let start) = position, last.info.page?.style.isRandomAccess == true,
                !isResidual(mode)
            {
                try await readWave(from: start, size: last.info.page?.size ?? max(1, last.nodes.count), mode: mode)
            } else {
                try reserve(1)
                add([try await read(position, after: last, validators: nil)])
            }
        }
        return try finish(
            offset: exact ? request.fetchOffset - (pages.first?.start ?? 0) : request.fetchOffset,
            windowFull: isFull(mode))
    }

    /// Sends every page of the cached answer with its validators. When all come back "not
    /// modified", so does the answer; at the first page that changed, `nil`: the walk starts over.
    private mutating func revalidate(_ recorded: [PageValidator]) async throws -> StoreResponse? {
        var last: ResponseInfo?
        var pageFreshness: [ResponseFreshness] = []
        var exchanges = 0
        for validator in recorded {
            try reserve(1)
            let response = try await send(validator.request)
            guard response.info.notModified else {
                pagesRead = 0
                return nil
            }
            exchanges += response.info.exchanges
            last = response.info
            if let page = response.info.freshness { pageFreshness.append(page) }
        }
        guard var info = last else { return nil }
        info.page = nil
        info.freshness = ResponseFreshness.combining(pageFreshness)
        info.pagesRead = pagesRead
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
    private func isFull(_ mode: Mode) -> Bool {
        switch mode {
        case .window(let end):
            guard let last = pages.last else { return false }
            return last.start + (last.info.page?.records ?? last.nodes.count) >= end
        case .residual(let end):
            guard pages.reduce(0, { $0 + $1.nodes.count }) >= end else { return false }
            return pages.last?.info.applied.tiesInKeyOrder != false || tieGroupClosed(at: end)
        case .all:
            return false
        }
    }

    /// Whether the records read in the backend's order (sorted, ties in no known order) go past
    /// the group of records that sort equal to the `end`th: until they do, a record of that
    /// group not yet read may come before it once ties are broken by key.
    private func tieGroupClosed(at end: Int) -> Bool {
        let matches = pages.flatMap(\.nodes)
        guard end > 0, end <= matches.count, let last = matches.last else { return true }
        var source: [ObjectID: Node] = [:]
        for page in pages {
            for node in page.related { source[node.id] = node }
            for node in page.nodes { source[node.id] = node }
        }
        return plan.sortValues(of: matches[end - 1], source: source) != plan.sortValues(of: last, source: source)
    }

    /// Reads the next pages by position, several at once.
    private mutating func readWave(from start: Int, size: Int, mode: Mode) async throws {
        var positions: [Int] = []
        var position = start
        while positions.count < options.concurrency, total.map({ position < $0 }) ?? true,
            lastStart.map({ position <= $0 }) ?? true
        {
            if case .window(let end) = mode, position >= end { break }
            positions.append(position)
            position += size
        }
        if positions.isEmpty { positions = [start] }
        positions = Array(positions.prefix(try reserve(positions.count)))
        let walk = self
        let wave = try await withThrowingTaskGroup(of: Page.self, returning: [Page].self) { group in
            for position in positions {
                group.addTask { try await walk.read(.record(position), after: nil, validators: nil) }
            }
            var wave: [Page] = []
            for try await page in group { wave.append(page) }
            return wave
        }
        add(wave.sorted { $0.start < $1.start })
    }

    /// Counts pages about to be read against `maxPages` and returns how many may be read (at
    /// least one, or it throws `too-many-pages`).
    @discardableResult
    private mutating func reserve(_ count: Int) throws(StoreChainError) -> Int {
        guard pagesRead < options.maxPages else {
            let endpoint = pages.first?.info.page?.endpoint.map { " (\($0))" } ?? ""
            throw StoreChainError(
                .tooManyPages,
                "fetching \(plan.request) needs more than \(options.maxPages) pages from the backend\(endpoint)",
                suggestion:
                    "add a fetch limit or a narrower predicate, or raise max-pages (the pagination handler's, or the "
                    + "remote's when no pagination handler is above it)")
        }
        let granted = min(count, options.maxPages - pagesRead)
        pagesRead += granted
        return granted
    }

    /// Sends one page request below the pager, in a span of its own when the chain traces.
    private func send(_ page: PageRequest) async throws -> StoreResponse {
        let (next, context, fetch) = (next, context, pageFetch)
        return try await context.withSpan("storechain.pagination.page") { span in
            span?.attributes["storechain.entity"] = fetch.entity
            span?.attributes["storechain.page"] = page.description
            return try await next(.page(fetch, page), context)
        }
    }

    /// Reads one page.
    private func read(_ position: PageRequest.Position, after previous: Page?, validators: Validators?)
        async throws -> Page
    {
        let page = PageRequest(position, size: options.pageSize(for: plan.entity.name), validators: validators)
        let response = try await send(page)
        guard case .objects(let nodes) = try response.fetchResult() else {
            throw StoreChainError(
                .invalidResponse, "\(response.info.answeredBy) answered a page of \(plan.entity.name) without objects",
                suggestion: "a terminal asked for a page answers with the page's objects")
        }
        var start = response.info.page?.start ?? 0
        if case .token = position, let previous {
            start = previous.start + (previous.info.page?.records ?? previous.nodes.count)
        }
        var asked = page
        asked.validators = nil
        return Page(request: asked, start: start, nodes: nodes, related: response.related, info: response.info)
    }

    /// Keeps pages in the backend's order and reports progress.
    private mutating func add(_ newPages: [Page]) {
        for page in newPages {
            recordsRead += page.info.page?.records ?? page.nodes.count
            if let pageTotal = page.info.page?.total { total = pageTotal }
            if let pageLastStart = page.info.page?.lastStart { lastStart = pageLastStart }
            pages.append(page)
        }
        pages.sort { $0.start < $1.start }
        context[FetchProgressKey.self]?(
            FetchProgress(entity: plan.entity.name, pages: pagesRead, records: recordsRead, totalRecords: total))
    }

    /// How many records a listing the backend filters holds, when it says so without being read
    /// whole: its total (`X-Total-Count`), or where its last page starts (`Link: rel="last"` on
    /// a listing by page number or offset) and how many records that page holds.
    private mutating func listingSize() async throws -> Int? {
        if let total { return total }
        guard let lastStart, pages.first?.info.page?.style.isRandomAccess == true else { return nil }
        if let page = pages.first(where: { $0.start == lastStart }) {
            return lastStart + (page.info.page?.records ?? page.nodes.count)
        }
        try reserve(1)
        let last = try await read(.record(lastStart), after: nil, validators: nil)
        // Only a page that starts there and is the last answers; else the walk reads on.
        guard last.start == lastStart, last.info.page?.next == nil else { return nil }
        add([last])
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
    private func finish(offset: Int, windowFull: Bool) throws(StoreChainError) -> StoreResponse {
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
        var local = plan.request
        local.fetchOffset = max(0, offset)
        // Where the backend applied the whole predicate, or the terminal evaluated the rest, the
        // pages hold the matches only: the predicate runs once per record, where it was read
        // (and could not run here where the backend applied it: the related objects a key path
        // such as `album.year` reads were never loaded).
        if pages.allSatisfy({ $0.info.applied.predicate || $0.info.page?.matchesOnly == true }) {
            local.predicate = nil
        }
        let localPlan = try FetchPlan(local, model: model)
        try localPlan.requireLoaded(nodes, source: source)
        let result = localPlan.execute(over: nodes, source: source)
        var related: [Node] = []
        if case .objects(let objects) = result, !local.relationshipKeyPathsForPrefetching.isEmpty {
            related = source.nodes(along: local.relationshipKeyPathsForPrefetching, from: objects)
        }
        var info = answerInfo()
        info.pageValidators = pageValidators(windowFull: windowFull)
        info.completeCollections = completeCollections()
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
        info.pagesRead = pagesRead
        info.exchanges = pages.reduce(0) { $0 + $1.info.exchanges }
        info.skippedRecords = pages.reduce(0) { $0 + $1.info.skippedRecords }
        info.hasMorePages = pages.last?.info.page.map { $0.next != nil }
        return info
    }
}
