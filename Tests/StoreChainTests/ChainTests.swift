import Foundation
import StoreChain
import StoreChainTesting
import Testing

@Suite struct ChainTests {
    struct PassThrough: StoreHandler {
        func handle(_ request: StoreRequest, context: RequestContext, next: NextResponder) async throws
            -> StoreResponse
        {
            try await next(request, context)
        }
    }

    /// Answers fetches of `Band` itself, forwards everything else.
    struct BandAnswerer: StoreHandler {
        func handle(_ request: StoreRequest, context: RequestContext, next: NextResponder) async throws
            -> StoreResponse
        {
            guard case .fetch(let fetch) = request, fetch.entity == "Band" else {
                return try await next(request, context)
            }
            return TestData.fetched([TestData.node("Band", 99, ["name": "Local"])], by: name, origin: .memory)
        }
    }

    enum StampsKey: ResponseFactKey { typealias Value = String }

    /// Stamps every response on the way up.
    struct Stamper: StoreHandler {
        let stamp: String
        func handle(_ request: StoreRequest, context: RequestContext, next: NextResponder) async throws
            -> StoreResponse
        {
            var response = try await next(request, context)
            response.info.facts[StampsKey.self] = (response.info.facts[StampsKey.self] ?? "") + stamp
            return response
        }
    }

    let terminal: RecordingResponder

    init() throws {
        terminal = RecordingResponder(forwardingTo: try Fixtures.store())
    }

    /// Finding a handler of a type looks through a scope only when the scope takes the request.
    @Test func aScopedHandlerIsFoundOnlyForTheRequestsItsScopeTakes() throws {
        let cache = MemoryCache(model: try MusicFixture.model())
        let scoped: any StoreHandler = ScopedHandler(cache, kinds: [.fetch], entities: ["Album"])
        #expect(scoped.unscoped(as: MemoryCache.self) === cache)
        #expect(scoped.unscoped(as: MemoryCache.self, for: .fetch, entity: "Album") === cache)
        #expect(scoped.unscoped(as: MemoryCache.self, for: .objectFault, entity: "Album") == nil)
        #expect(scoped.unscoped(as: MemoryCache.self, for: .fetch, entity: "Band") == nil)
        #expect(scoped.unscoped(as: (any CachingHandler).self, for: .fetch) != nil)
        #expect((cache as any StoreHandler).unscoped(as: MemoryCache.self, for: .save, entity: "Band") === cache)
        #expect(scoped.unscoped(as: BatchingHandler.self) == nil)
    }

    @Test func aHandlerAnswersOrForwards() async throws {
        let chain = Chain(terminal: terminal) { BandAnswerer() }
        let bands = try await chain.send(.fetch(FetchRequest(entity: "Band")))
        #expect(bands.info.answeredBy == "BandAnswerer")
        #expect(bands.info.origin == .memory)
        #expect(try bands.fetchResult() == .objects([TestData.node("Band", 99, ["name": "Local"])]))
        try terminal.requireForwarded(exactly: 0)

        let albums = try await chain.fetch(FetchRequest(entity: "Album", resultType: .count))
        #expect(albums == .count(6))
        try terminal.requireForwarded(exactly: 1, .fetch, entity: "Album")
    }

    @Test func handlersRunInOrderDownAndBackUp() async throws {
        let log = SharedLog()
        let chain = Chain(terminal: terminal) {
            RecordingHandler("first", log: log)
            RecordingHandler("second", log: log)
            Stamper(stamp: "a")
            Stamper(stamp: "b")
        }
        let response = try await chain.send(.objectFault(ObjectID(entity: "Band", key: 1)))
        #expect(
            log.all == [
                "first ↓ object-fault", "second ↓ object-fault", "second ↑ object-fault", "first ↑ object-fault",
            ])
        // The handler nearest the terminal works on the response first.
        #expect(response.info.facts[StampsKey.self] == "ba")
        #expect(response.info.answeredBy == "RecordingResponder" || response.info.answeredBy == "in-memory")
    }

    /// Keeps the `next` it was given, so the test can call it after the request is answered.
    final class NextKeeper: StoreHandler {
        let kept = Locked<NextResponder?>(nil)

        func handle(_ request: StoreRequest, context: RequestContext, next: NextResponder) async throws
            -> StoreResponse
        {
            kept.withLock { $0 = next }
            return try await next(request, context)
        }
    }

    /// A handler may keep `next` and call it later (a background revalidation does): it still
    /// reaches exactly the handlers below that handler, in order, then the terminal.
    @Test func aKeptNextReachesTheSameHandlersBelowLater() async throws {
        let log = SharedLog()
        let keeper = NextKeeper()
        let chain = Chain(terminal: terminal) {
            RecordingHandler("above", log: log)
            keeper
            RecordingHandler("below", log: log)
            Stamper(stamp: "s")
        }
        let fault = StoreRequest.objectFault(ObjectID(entity: "Band", key: 1))
        let first = try await chain.send(fault)
        let next = try #require(keeper.kept.withLock { $0 })
        let later = try await next(.fetch(FetchRequest(entity: "Album", resultType: .count)), chain.makeContext())
        #expect(try later.fetchResult() == .count(6))
        #expect(later.info.facts[StampsKey.self] == "s" && first.info.facts[StampsKey.self] == "s")
        #expect(
            log.all == [
                "above ↓ object-fault", "below ↓ object-fault", "below ↑ object-fault", "above ↑ object-fault",
                "below ↓ fetch", "below ↑ fetch",
            ])
        try terminal.requireForwarded(exactly: 1, .fetch, entity: "Album")
    }

    /// `NextResponder(_:)` wraps a closure, for calling a handler on its own.
    @Test func aHandlerCalledOnItsOwnForwardsToAClosure() async throws {
        let asked = Locked<[StoreRequest]>([])
        let next = NextResponder { request, context in
            asked.withLock { $0.append(request) }
            return try await Chain(handlers: [], terminal: terminal).send(request, context: context)
        }
        let response = try await Stamper(stamp: "x").handle(
            .fetch(FetchRequest(entity: "Band", resultType: .count)), context: RequestContext(), next: next)
        #expect(try response.fetchResult() == .count(4))
        #expect(response.info.facts[StampsKey.self] == "x")
        #expect(asked.withLock { $0 }.count == 1)
    }

    @Test func builderTakesConditionsAndLoops() async throws {
        let log = SharedLog()
        let extra = true
        let chain = Chain(terminal: terminal) {
            for name in ["a", "b"] { RecordingHandler(name, log: log) }
            if extra { RecordingHandler("c", log: log) } else { PassThrough() }
        }
        #expect(chain.handlers.map(\.name) == ["a", "b", "c"])
        _ = try await chain.fetch(FetchRequest(entity: "Band"))
        #expect(log.all.count == 6)
    }

    @Test func scopedHandlersApplyOnlyToTheirKindsAndEntities() async throws {
        let log = SharedLog()
        let chain = Chain(terminal: terminal) {
            RecordingHandler("faults", log: log).when(kinds: [.objectFault])
            RecordingHandler("albums", log: log).when(entities: ["Album"])
            BandAnswerer().when(kinds: [.objectFault])
        }
        _ = try await chain.fetch(FetchRequest(entity: "Band"))
        #expect(log.all.isEmpty)
        try terminal.requireForwarded(exactly: 1, .fetch, entity: "Band")
        _ = try await chain.send(.objectFault(ObjectID(entity: "Album", key: 10)))
        #expect(
            log.all == [
                "faults ↓ object-fault", "albums ↓ object-fault", "albums ↑ object-fault", "faults ↑ object-fault",
            ])
    }

    @Test func errorsFromBelowReachTheCallerUnchanged() async throws {
        let failing = RecordingResponder { request, _ in
            throw StoreChainError(
                .unavailable, "backend down for \(request.kind.rawValue)", at: .init(path: "https://x.example/bands"))
        }
        let chain = Chain(terminal: failing) {
            PassThrough()
            Stamper(stamp: "x")
        }
        let error = await #expect(throws: StoreChainError.self) { try await chain.fetch(FetchRequest(entity: "Band")) }
        #expect(error?.code == .unavailable)
        #expect(error?.description == "https://x.example/bands: backend down for fetch")

        let cancelled = Chain(terminal: RecordingResponder { _, _ in throw CancellationError() }) { PassThrough() }
        await #expect(throws: CancellationError.self) { try await cancelled.fetch(FetchRequest(entity: "Band")) }
    }

    @Test func cancellingTheCallerCancelsDownstreamWork() async throws {
        let clock = ManualClock()
        let sawCancellation = Locked(false)
        let slow = RecordingResponder { _, context in
            do {
                try await context.clock.sleep(for: .seconds(60))
            } catch is CancellationError {
                sawCancellation.withLock { $0 = true }
                throw CancellationError()
            }
            return TestData.fetched([])
        }
        let chain = Chain(terminal: slow, clock: clock) {
            PassThrough()
            PassThrough()
        }
        let task = Task { try await chain.fetch(FetchRequest(entity: "Band")) }
        try await clock.waitForSleepers(1)
        task.cancel()
        await #expect(throws: CancellationError.self) { try await task.value }
        #expect(sawCancellation.withLock { $0 })
    }

    @Test func shutdownAwaitsBackgroundWork() async throws {
        let clock = ManualClock()
        let box = SharedFlag()
        let chain = Chain(terminal: terminal, clock: clock) { SharedFlagHandler(flag: box) }
        _ = try await chain.fetch(FetchRequest(entity: "Band"))
        #expect(chain.background.count == 1)
        try await clock.waitForSleepers(1)
        let shutdown = Task { await chain.shutdown() }
        try await chain.background.waitForShutdown()
        #expect(!box.isSet, "shutdown waits for the work (it sleeps on the clock) instead of cancelling it")
        await clock.advance(by: .seconds(30))
        await shutdown.value
        #expect(box.isSet)
        #expect(chain.background.count == 0)
        try terminal.requireForwarded(exactly: 2, .fetch)
        // After shutdown no new background work starts.
        #expect(!chain.background.run {})
    }

    /// Shutdown cancelled a change source's task and returned at once, so a source still applying
    /// a change (writing the caches) went on after it: into a cache file the app had closed.
    @Test func shutdownWaitsForAChangeSourceToStop() async throws {
        final class Following: ChangeSource, Sendable {
            let clock: ManualClock
            let stopped = SharedFlag()
            init(clock: ManualClock) { self.clock = clock }
            func handle(_ request: StoreRequest, context: RequestContext, next: NextResponder) async throws
                -> StoreResponse
            {
                try await next(request, context)
            }
            func follow(services: ChainServices, apply: @escaping @Sendable (ChangeEvent) async -> Void) async {
                _ = try? await clock.sleep(until: .distantFuture)
                // Cancelled: the last change it was given is applied before it stops.
                await apply(ChangeEvent(invalidatedEntities: ["Band"], source: "feed"))
                stopped.set()
            }
        }
        let clock = ManualClock()
        let source = Following(clock: clock)
        let chain = Chain(handlers: [source], terminal: terminal, clock: clock)
        try await clock.waitForSleepers(1)
        await chain.shutdown()
        #expect(source.stopped.isSet, "shutdown returned while the change source was still applying a change")
    }

    @Test func savesAndHandlersPublishChangeEvents() async throws {
        struct Announcer: StoreHandler {
            func handle(_ request: StoreRequest, context: RequestContext, next: NextResponder) async throws
                -> StoreResponse
            {
                context.events.publish(ChangeEvent(invalidatedEntities: ["Band"], source: name))
                return try await next(request, context)
            }
        }
        let chain = Chain(terminal: terminal) { Announcer().when(kinds: [.fetch]) }
        var events = chain.events.subscribe().makeAsyncIterator()
        _ = try await chain.fetch(FetchRequest(entity: "Band"))
        #expect(await events.next()?.source == "Announcer")

        let insert = Node(id: .temporary(entity: "Band"), attributes: ["name": "New"])
        let saved = try await chain.send(.save(SaveChanges(inserted: [insert]))).saveResult()
        let event = await events.next()
        #expect(event?.inserted == [ObjectID(entity: "Band", key: 5)])
        #expect(event?.permanentIDs == [insert.id: ObjectID(entity: "Band", key: 5)])
        #expect(saved.permanentIDs[insert.id] == ObjectID(entity: "Band", key: 5))
        await chain.shutdown()
        #expect(await events.next() == nil)
    }

    /// The oracle (Docs/Architecture.md, Invariants 1): five pass-through handlers change nothing, for generated
    /// fetch requests.
    @Test func passThroughHandlersGiveTheTerminalsAnswers() async throws {
        let store = try Fixtures.store()
        let chain = Chain(terminal: store) {
            PassThrough()
            PassThrough()
            PassThrough()
            PassThrough()
            PassThrough()
        }
        var generator = FetchRequestGenerator(seed: 7)
        for _ in 0..<300 {
            let request = try generator.request()
            #expect(try await chain.fetch(request) == store.fetch(request), "\(request)")
        }
    }

    /// Exchange facts live out of line: copies never share a change, and an info whose facts
    /// are back to their defaults equals one that never set them.
    @Test func responseFactsAreValuesComparedByContent() {
        var info = ResponseInfo(answeredBy: "remote", origin: .remote)
        let plain = info
        info.completeCollections = ["Band"]
        info.exchanges = 2
        var copy = info
        copy.exchanges = 3
        copy.pagesRead = 4
        #expect(info.exchanges == 2 && info.pagesRead == nil)
        #expect(copy.exchanges == 3 && copy.completeCollections == ["Band"])
        #expect(info != plain)
        info.completeCollections = []
        info.exchanges = 0
        #expect(info == plain)
        #expect(info.hashValue == plain.hashValue)
    }
}

/// A flag set by a background task, to see when shutdown has waited for it.
final class SharedFlag: Sendable {
    private let value = Locked(false)
    var isSet: Bool { value.withLock { $0 } }
    func set() { value.withLock { $0 = true } }
}

/// Starts background work that waits 30 seconds on the chain's clock, then sets the flag.
struct SharedFlagHandler: StoreHandler {
    let flag: SharedFlag
    func handle(_ request: StoreRequest, context: RequestContext, next: NextResponder) async throws
        -> StoreResponse
    {
        let response = try await next(request, context)
        context.background.run {
            try? await context.clock.sleep(for: .seconds(30))
            _ = try? await next(request, context)
            flag.set()
        }
        return response
    }
}

/// Random valid fetch requests over `Fixtures.model()`.
struct FetchRequestGenerator {
    var random: SeededRandom

    init(seed: UInt64) {
        random = SeededRandom(seed: seed)
    }

    mutating func pick<T>(_ options: [T]) -> T { options[random.int(options.count)] }

    mutating func request() throws -> FetchRequest {
        let entity = pick(["Band", "Album", "Track"])
        let comparisons: [String] =
            switch entity {
            case "Band":
                [
                    "name BEGINSWITH[c] '\(pick(["r", "s", "l", "m"]))'", "country == \(pick(["'UK'", "'US'", "nil"]))",
                    "ANY albums.year > \(1980 + random.int(40))", "albums.@count >= \(random.int(3))",
                    "founded < CAST('\(1990 + random.int(20))-01-01', 'NSDate')",
                    "active == \(pick(["TRUE", "FALSE", "nil"]))",
                    "ALL albums.price < \(random.int(15))", "name CONTAINS[cd] '\(pick(["o", "u", "e"]))'",
                ]
            case "Album":
                [
                    "year > \(1985 + random.int(30))", "price <= \(random.int(15))",
                    "band.name LIKE[c] '*\(pick(["e", "o", "r"]))*'",
                    "title MATCHES '.*[aeiou].*'", "tracks.@sum.seconds > \(random.int(900))",
                    "year IN {1989, 1999, 2010}",
                    "price BETWEEN {\(random.int(10)), \(10 + random.int(5))}", "band.country != 'UK'",
                ]
            default:
                [
                    "seconds > \(150 + random.int(400))", "album.year < \(1990 + random.int(30))",
                    "title ENDSWITH '\(pick(["e", "r", "t"]))'", "album.band.name BEGINSWITH 'S'", "album.price == nil",
                ]
            }
        var format = pick(comparisons)
        for _ in 0..<random.int(3) {
            format += pick([" AND ", " OR "]) + pick(comparisons)
        }
        if random.int(4) == 0 { format = "NOT (\(format))" }
        let sortKeys: [String] =
            switch entity {
            case "Band": ["name", "country", "founded", "active"]
            case "Album": ["year", "price", "title", "band.name"]
            default: ["seconds", "title", "album.year"]
            }
        let sort = (0..<random.int(3)).map { _ in
            FetchSortDescriptor(pick(sortKeys), ascending: random.int(2) == 0)
        }
        let resultType = pick([FetchRequest.ResultType.objects, .objectIDs, .count, .objects])
        return FetchRequest(
            entity: entity, predicate: try FetchPredicate(format: format), sortDescriptors: sort,
            fetchLimit: random.int(3) == 0 ? nil : random.int(5), fetchOffset: random.int(3), resultType: resultType)
    }
}
