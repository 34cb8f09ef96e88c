import Foundation
import InMemoryTracing
import StoreChain
import Synchronization
import Tracing

/// What a chain did, kept for the inspector: give its `tracing` to the chain, and the inspector
/// reads the chain's own spans and request summaries from it (no second bookkeeping).
///
/// Only a query run from the inspector's console is traced in full (each span of it, with the
/// sub-requests and HTTP exchanges it took); every other request the chain serves is kept as a
/// summary (when, who answered, the cache status, exchanges), which costs no span: a memory-cache
/// hit costs about what it costs without an inspector. It keeps the last `capacity` requests.
///
/// ```swift
/// let recorder = InspectorRecorder()
/// let chain = Chain(handlers: handlers, terminal: remote, tracing: recorder.tracing)
/// ```
public final class InspectorRecorder: TraceSelection {
    /// Whether the current task runs a query from the inspector's console: its requests are
    /// traced in full.
    @TaskLocal private static var inConsole = false
    /// How many console queries run now: while none does, no request is one, and the task-local
    /// is not read (every request the app makes asks).
    private let consoleQueries = Atomic<Int>(0)

    /// Records the spans of the requests traced in full.
    let tracer = InMemoryTracer(recordInjections: false, recordExtractions: false)
    /// Whether constants in predicates are shown as `?`.
    let redactsValues: Bool
    private let capacity: Int
    private let kept: Locked<Ring>
    /// Spans of traces in full not yet taken by the query that made them (one of several running
    /// together), at most `capacity` times ten.
    private let untaken = Locked<[RecordedSpan]>([])

    /// - Parameters:
    ///   - redactsValues: Whether predicates' constants are shown as `?` (the default).
    ///   - capacity: How many requests it keeps, the oldest forgotten first.
    public init(redactsValues: Bool = true, capacity: Int = 1_000) {
        self.redactsValues = redactsValues
        self.capacity = max(1, capacity)
        kept = Locked(Ring(capacity: max(1, capacity)))
    }

    /// The tracing to give the chain.
    public var tracing: ChainTracing {
        ChainTracing(tracer: tracer, redactsValues: redactsValues, selection: self)
    }

    @usableFromInline package func tracesInFull(_ request: StoreRequest) -> Bool {
        consoleQueries.load(ordering: .acquiring) > 0 && Self.inConsole
    }

    /// Runs `query` as the console's: what it sends is traced in full.
    func inConsole<T>(_ query: () async throws -> T) async throws -> T {
        consoleQueries.add(1, ordering: .releasing)
        defer { consoleQueries.subtract(1, ordering: .releasing) }
        return try await Self.$inConsole.withValue(true) { try await query() }
    }

    @usableFromInline package func finished(_ summary: consuming RequestSummary) {
        let entry = Ring.Entry.summary(summary)
        kept.withLock { $0.append(entry) }
    }

    /// Keeps a request the console traced in full.
    func record(_ request: RecordedRequest) {
        kept.withLock { $0.append(.recorded(request)) }
    }

    /// The spans of the trace `id` finished so far, in start order, taken out of the tracer.
    func takeTrace(_ id: String) -> [RecordedSpan] {
        let finished = tracer.popFinishedSpans().map(RecordedSpan.init)
        return untaken.withLock { untaken in
            untaken.append(contentsOf: finished)
            let taken = untaken.filter { $0.trace == id }
            untaken.removeAll { $0.trace == id }
            if untaken.count > capacity * 10 { untaken.removeFirst(untaken.count - capacity * 10) }
            return taken.sorted { $0.start < $1.start }
        }
    }

    /// The requests kept after the first `seen` ever kept, oldest first, and how many have been
    /// kept now: for following the chain as it works (`seen: .max` only counts).
    func requests(after seen: Int) -> (requests: [RecordedRequest], seen: Int) {
        let (entries, total) = kept.withLock { ring in (ring.entries(after: seen), ring.total) }
        return (entries.map { view(of: $0.entry, number: $0.number) }, total)
    }

    /// The last `count` requests kept, newest first.
    func recentRequests(_ count: Int) -> [RecordedRequest] {
        let (entries, _) = kept.withLock { ring in (ring.entries(after: max(0, ring.total - count)), ring.total) }
        return entries.reversed().map { view(of: $0.entry, number: $0.number) }
    }

    private func view(of entry: Ring.Entry, number: Int) -> RecordedRequest {
        switch entry {
        case .summary(let summary):
            var request = RecordedRequest(summary.request, redactingValues: redactsValues)
            request.number = number
            request.start = summary.start
            request.end = summary.end
            request.answeredBy = summary.answeredBy
            request.cacheStatus = summary.cacheStatus?.rawValue
            request.isStale = summary.isStale
            request.exchanges = summary.exchanges
            request.failed = summary.failed
            return request
        case .recorded(var request):
            request.number = number
            return request
        }
    }

    /// The last requests kept, as they came: a summary is made into what the page shows only
    /// when the page asks, off the chain's path.
    private struct Ring {
        enum Entry {
            case summary(RequestSummary)
            case recorded(RecordedRequest)
        }

        let capacity: Int
        private var items: [Entry] = []
        /// How many were ever kept: the number of the next one.
        private(set) var total = 0

        init(capacity: Int) {
            self.capacity = capacity
            items.reserveCapacity(capacity)
        }

        /// Where the next entry goes once the ring is full.
        private var slot = 0

        mutating func append(_ entry: consuming Entry) {
            if items.count < capacity {
                items.append(entry)
            } else {
                items[slot] = entry
                slot = slot + 1 == capacity ? 0 : slot + 1
            }
            total += 1
        }

        /// The entries numbered `seen` and after that are still kept, oldest first.
        func entries(after seen: Int) -> [(number: Int, entry: Entry)] {
            let first = max(seen, total - items.count)
            guard first < total else { return [] }
            return (first..<total).map { number in (number, items[number % capacity]) }
        }
    }
}

/// One request the chain served, as the page lists it: a summary, and for a query from the
/// console its spans.
struct RecordedRequest: Sendable, Codable, Hashable {
    /// Its place among the requests kept.
    var number = 0
    var kind: String
    /// What it asked for: an entity with its predicate, or an object.
    var subject: String
    /// Nanoseconds since 1970.
    var start: UInt64 = 0
    var end: UInt64 = 0
    var answeredBy: String?
    var cacheStatus: String?
    var isStale = false
    var exchanges = 0
    var failed = false
    /// Every span of it, when it was traced in full.
    var spans: [RecordedSpan]?

    init(_ request: StoreRequest, redactingValues: Bool) {
        let asked = request.unconditional
        kind = request.kind.rawValue
        switch asked {
        case .fetch(let fetch), .page(let fetch, _):
            subject =
                fetch.entity + (fetch.predicate.map { " where " + $0.format(redactingValues: redactingValues) } ?? "")
        case .objectFault(let id): subject = id.description
        case .relationshipFault(let id, let name), .relationshipPage(let id, let name, _):
            subject = "\(id).\(name)"
        case .save(let changes): subject = changes.entities.sorted().joined(separator: ", ")
        case .changes, .revalidation: subject = ""
        }
    }
}
