/// The pages of one listing read so far, in the backend's order, and the one loop that reads them:
/// after a first page, on from the position the last one gave, one page at a time, or several at
/// once where pages are by record position. A fetch (`PageWalk`) and a relationship's own list
/// (`RelationshipPageWalk`) both read their pages here, at most `maxPages` of them.
struct PageSequence {
    /// One page's answer, placed in the backend's order.
    struct Page: Sendable {
        /// What was asked for (without validators).
        var request: PageRequest
        var start: Int
        /// The page's objects, in the backend's order.
        var nodes: [Node]
        var related: [Node]
        var info: ResponseInfo
    }

    /// Sends one page request below the pager and returns its objects, the objects that came
    /// with them, and what the answer says.
    typealias Send = @Sendable (PageRequest) async throws -> (nodes: [Node], related: [Node], info: ResponseInfo)

    private(set) var pages: [Page] = []
    /// Pages read or about to be, counted against `maxPages`.
    private(set) var pagesRead = 0
    private(set) var recordsRead = 0
    /// The listing's total, once a page stated it.
    private(set) var total: Int?
    /// Where the listing's last page starts, once a page said it.
    private(set) var lastStart: Int?
    private let options: PaginationOptions
    private let pageSize: Int?
    /// What is read, for the error past `maxPages`: "fetching Track", "reading Band/1.albums".
    private let reading: String
    private let sendPage: Send
    /// Told after every page added, for a fetch of the entity named.
    private let progress: (entity: String, report: FetchProgressKey.Value)?
    /// Told what every page of the named entity's unfiltered listing shows of its size.
    private let sizes: (entity: String, learned: ListingSizes)?

    init(
        reading: String, options: PaginationOptions, pageSize: Int?,
        progress: (entity: String, report: FetchProgressKey.Value)? = nil,
        sizes: (entity: String, learned: ListingSizes)? = nil, send: @escaping Send
    ) {
        self.reading = reading
        self.options = options
        self.pageSize = pageSize
        self.progress = progress
        self.sizes = sizes
        self.sendPage = send
    }

    /// Sends a page request as it is (a revalidation's, with its size and validators).
    func send(_ page: PageRequest) async throws -> (nodes: [Node], related: [Node], info: ResponseInfo) {
        try await sendPage(page)
    }

    /// Reads the page at `position`; a page read by continuation starts where `previous` ended.
    func read(_ position: PageRequest.Position, after previous: Page?, validators: Validators?) async throws -> Page {
        let page = PageRequest(position, size: pageSize, validators: validators)
        return place(try await sendPage(page), asked: page, after: previous)
    }

    /// A page's answer placed in the listing: a page read by continuation starts where
    /// `previous` ended.
    func place(
        _ answer: (nodes: [Node], related: [Node], info: ResponseInfo), asked page: PageRequest, after previous: Page?
    ) -> Page {
        var start = answer.info.page?.start ?? 0
        if case .token = page.position, let previous {
            start = previous.start + (previous.info.page?.records ?? previous.nodes.count)
        }
        var asked = page
        asked.validators = nil
        return Page(request: asked, start: start, nodes: answer.nodes, related: answer.related, info: answer.info)
    }

    /// Keeps pages in the backend's order and reports progress.
    mutating func add(_ newPages: [Page]) {
        for page in newPages {
            recordsRead += page.info.page?.records ?? page.nodes.count
            if let pageTotal = page.info.page?.total { total = pageTotal }
            if let pageLastStart = page.info.page?.lastStart { lastStart = pageLastStart }
            if let sizes, let info = page.info.page { sizes.learned.learn(sizes.entity, from: info, start: page.start) }
            pages.append(page)
        }
        pages.sort { $0.start < $1.start }
        if let progress {
            progress.report(
                FetchProgress(entity: progress.entity, pages: pagesRead, records: recordsRead, totalRecords: total))
        }
    }

    /// Forgets the pages counted so far: a revalidation found a page changed and reads again.
    mutating func restart() {
        pagesRead = 0
    }

    /// Counts pages about to be read against `maxPages` and returns how many may be read (at
    /// least one, or it throws `too-many-pages`).
    @discardableResult
    mutating func reserve(_ count: Int) throws(StoreChainError) -> Int {
        guard pagesRead < options.maxPages else {
            let endpoint = pages.first?.info.page?.endpoint.map { " (\($0))" } ?? ""
            throw StoreChainError(
                .tooManyPages,
                "\(reading) needs more than \(options.maxPages) pages from the backend\(endpoint)",
                suggestion:
                    "add a fetch limit or a narrower predicate, or raise max-pages (the pagination handler's, or the "
                    + "remote's when no pagination handler is in the chain)")
        }
        let granted = min(count, options.maxPages - pagesRead)
        pagesRead += granted
        return granted
    }

    /// Reads on from the last page until `isFull` says the pages hold what is needed or the
    /// listing ends: several pages at once where they are by record position and `inWaves`,
    /// never past `end` (a window's last record) when given.
    mutating func readOn(inWaves: Bool, end: Int?, until isFull: (Self) -> Bool) async throws {
        while let last = pages.last, let position = last.info.page?.next, !isFull(self) {
            // A listing read by continuation ends where its stated total is reached.
            if case .token = position, let total, last.start + (last.info.page?.records ?? last.nodes.count) >= total {
                break
            }
            if case .record(let start) = position, last.info.page?.style.isRandomAccess == true, inWaves {
                try await readWave(from: start, size: last.info.page?.size ?? max(1, last.nodes.count), end: end)
            } else {
                try reserve(1)
                add([try await read(position, after: last, validators: nil)])
            }
        }
    }

    /// Reads the next pages by position, several at once.
    private mutating func readWave(from start: Int, size: Int, end: Int?) async throws {
        var positions: [Int] = []
        var position = start
        while positions.count < options.concurrency, total.map({ position < $0 }) ?? true,
            lastStart.map({ position <= $0 }) ?? true
        {
            if let end, position >= end { break }
            positions.append(position)
            position += size
        }
        if positions.isEmpty { positions = [start] }
        positions = Array(positions.prefix(try reserve(positions.count)))
        let sequence = self
        let wave = try await withThrowingTaskGroup(of: Page.self, returning: [Page].self) { group in
            for position in positions {
                group.addTask { try await sequence.read(.record(position), after: nil, validators: nil) }
            }
            var wave: [Page] = []
            for try await page in group { wave.append(page) }
            return wave
        }
        add(wave.sorted { $0.start < $1.start })
    }
}
