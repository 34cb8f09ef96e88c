import Foundation
import StoreChain
import StoreChainDemoBackend
import StoreChainHTTP
import StoreChainPipeline
import StoreChainTesting
import Synchronization
import Testing

/// The change feed against the demo backend over loopback: `GET /v2/changes` long-polled, and
/// `GET /v2/events` as server-sent events, by the `change-feed` handler of the demo's live
/// pipelines.
@Suite(.serialized) struct ChangeFeedEndToEndTests {
    /// The demo model and live pipeline in a fresh folder, and the environment that points them
    /// at `port` and at one cache folder.
    static func pipeline(port: Int, text: String = DemoPipelines.v2Live) throws
        -> (file: URL, environment: [String: String])
    {
        let folder = TemporaryFolder.make("storechain-feed")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        try DemoCatalogModel.text.write(
            to: folder.appending(path: "music.model.yml"), atomically: true, encoding: .utf8)
        let file = folder.appending(path: "live.pipeline.yml")
        try text.write(to: file, atomically: true, encoding: .utf8)
        return (file, ["STORECHAIN_DEMO_URL": "http://127.0.0.1:\(port)", "STORECHAIN_CACHE_DIR": folder.path])
    }

    /// The first result `results` delivers that satisfies `condition`, or an error after a minute
    /// (a guard against a lost change hanging the run, not a timing: the long poll answers as
    /// soon as the backend has the change).
    ///
    /// On a timeout the error says what was delivered last and what `diagnose` finds then (what
    /// the chain answers now, say), so a change lost under load says where it was lost.
    static func first(
        _ results: FetchObservation, where condition: @escaping @Sendable ([ManagedObject]) async throws -> Bool,
        diagnose: @Sendable () async -> String = { "" }
    ) async throws -> [ManagedObject] {
        let delivered = Delivered()
        let found = try await withThrowingTaskGroup(of: [ManagedObject]?.self) { group in
            group.addTask {
                for try await objects in results {
                    delivered.record(objects)
                    if try await condition(objects) { return objects }
                }
                return nil
            }
            group.addTask {
                try await Task.sleep(for: .seconds(60))
                return nil
            }
            defer { group.cancelAll() }
            return try await group.next() ?? nil
        }
        if let found { return found }
        let (count, last) = delivered.state.withLock { $0 }
        var values: [String] = []
        for object in last {
            values.append("\(object.objectID): \((try? await object.value("title")).map { "\($0)" } ?? "?")")
        }
        throw StoreChainError(
            .timedOut,
            "no observed result met the condition within a minute; \(count) results delivered, the last [\(values.joined(separator: ", "))]; \(await diagnose())"
        )
    }

    /// Two processes over one disk cache, each following the feed and observing the same fetch;
    /// a third client renames an album through the backend: both observers deliver the new title,
    /// and a fetch outside the change's reach is still answered from the caches.
    @Test(arguments: [DemoPipelines.v2Live, DemoPipelines.v2Stream])
    func aSaveByAnotherClientReachesObserversInTwoProcessesOverOneDiskCache(pipeline: String) async throws {
        let backend = try DemoBackend(bands: 20)
        let port = try await backend.start()
        let (file, environment) = try Self.pipeline(port: port, text: pipeline)
        let first = try Pipeline.load(contentsOf: file, environment: environment).makeChain()
        let second = try Pipeline.load(contentsOf: file, environment: environment).makeChain()
        let request = try TestData.fetch("Album", where: "id == 5")
        let observers = [first, second].map { chain in
            ObjectContext(chain: chain, model: backend.model).observe(request)
        }
        for observer in observers {
            let current = try await Self.first(observer) { $0.count == 1 }
            #expect(try await current[0].value("title") != "Renamed elsewhere")
        }
        let otherContext = try Self.anotherClient(of: backend)
        func rename(to title: String) async throws {
            try otherContext.object(with: ObjectID(entity: "Album", key: .integer(5))).set(.string(title), for: "title")
            _ = try await otherContext.save()
            for (index, observer) in observers.enumerated() {
                let chain = [first, second][index]
                _ = try await Self.first(observer) { objects in
                    try await objects.first?.value("title") == .string(title)
                } diagnose: {
                    await Self.whatTheChainHolds(chain, request: request, waitingFor: title, observer: index)
                }
            }
        }
        try await rename(to: "Renamed elsewhere")
        // Read after the feeds delivered a change, so after they knew their position (what is
        // read before that is read again once they do).
        let bands = try TestData.fetch("Band", where: "id <= 3")
        _ = try await first.fetch(bands)
        try await rename(to: "Renamed again")
        let before = backend.stats.requestsByRoute["/v2/bands"] ?? 0
        let response = try await first.send(.fetch(bands))
        #expect(response.info.cacheStatus == .hit, "a change to an album leaves the bands cached")
        #expect(backend.stats.requestsByRoute["/v2/bands"] ?? 0 == before)
        await first.shutdown()
        await second.shutdown()
        await backend.stop()
    }

    /// What a chain answers for `request` from its caches and from the backend, for a timeout's error.
    static func whatTheChainHolds(_ chain: Chain, request: FetchRequest, waitingFor title: String, observer: Int) async
        -> String
    {
        func titles(_ policy: CachePolicy) async -> String {
            do {
                let response = try await chain.send(.fetch(request), context: chain.makeContext(cachePolicy: policy))
                guard case .objects(let objects) = try response.fetchResult() else { return "not objects" }
                let nodes = objects.map { "\($0[attribute: "title"])" }
                return "\(nodes) (\(response.info.answeredBy), \(response.info.cacheStatus.map { "\($0)" } ?? "-"))"
            } catch {
                return "error \(error)"
            }
        }
        return "observer \(observer) waited for '\(title)'; its chain's caches answer \(await titles(.cacheOnly)),"
            + " the backend \(await titles(.reload))"
    }

    /// The backend keeps a bounded window of changes and a new epoch per run: a cursor from
    /// before a restart is a gap (410 with the current cursor), never a resume at the wrong place.
    @Test func aCursorFromAnotherRunOfTheBackendIsAGap() async throws {
        let backend = try DemoBackend(bands: 5)
        let base = try #require(URL(string: "http://127.0.0.1:\(try await backend.start())"))
        let remote = try RemoteResponder(model: backend.model, options: DemoRemoteOptions.v2(baseURL: base))
        let now = try await remote.respond(to: .changes(ChangesRequest(cursor: nil)), context: RequestContext())
            .changeFeedPage()
        let cursor = try #require(now.cursor)
        #expect(!now.isGap)
        let restarted = try DemoBackend(bands: 5)
        let other = try RemoteResponder(
            model: restarted.model,
            options: DemoRemoteOptions.v2(
                baseURL: try #require(URL(string: "http://127.0.0.1:\(try await restarted.start())"))))
        let page = try await other.respond(to: .changes(ChangesRequest(cursor: cursor)), context: RequestContext())
            .changeFeedPage()
        #expect(page.isGap)
        #expect(page.cursor != nil && page.cursor != cursor)
        await backend.stop()
        await restarted.stop()
    }

    /// An event stream that drops in the middle of an event (the demo's quirk) is read again from
    /// the last whole event's id: every change arrives once, in order, over real HTTP. The last
    /// read ends when the stream goes quiet after its event, not at the ten-minute wait (the time
    /// limit guards that rule: reads that waited out their wait would pass it only after 10 min).
    @Test(.timeLimit(.minutes(1)))
    func aDroppedEventStreamResumesWithoutLosingOrRepeatingAChange() async throws {
        let backend = try DemoBackend(bands: 5, quirks: DemoQuirks(dropEventStreamAfter: 2))
        let base = try #require(URL(string: "http://127.0.0.1:\(try await backend.start())"))
        let remote = try RemoteResponder(model: backend.model, options: DemoRemoteOptions.v2Stream(baseURL: base))
        let start = try await remote.respond(to: .changes(ChangesRequest(cursor: nil)), context: RequestContext())
            .changeFeedPage()
        var cursor = try #require(start.cursor, "the stream says where it stands before any change")
        let albums = (1...5).map { ObjectID(entity: "Album", key: .integer($0)) }
        let other = ObjectContext(chain: Chain(handlers: [], terminal: remote), model: backend.model)
        for (index, id) in albums.enumerated() { try other.object(with: id).set("Renamed \(index)", for: "title") }
        _ = try await other.save()
        var seen: [ObjectID] = []
        var requests = 0
        while seen.count < albums.count, requests < 10 {
            let page = try await remote.respond(
                to: .changes(ChangesRequest(cursor: cursor, wait: .seconds(600))), context: RequestContext()
            ).changeFeedPage()
            #expect(!page.isGap)
            seen += page.changes.map(\.id)
            cursor = try #require(page.cursor)
            requests += 1
        }
        #expect(seen == albums)
        #expect(requests == 3, "two whole events a connection, then the drop")
        #expect(backend.stats.requestsByRoute["/v2/events"] == 4)
        await backend.stop()
    }

    /// An id from another run of the backend gets a `gap` event with the current id.
    @Test func anEventStreamIdFromAnotherRunIsAGap() async throws {
        let backend = try DemoBackend(bands: 5)
        let base = try #require(URL(string: "http://127.0.0.1:\(try await backend.start())"))
        let remote = try RemoteResponder(model: backend.model, options: DemoRemoteOptions.v2Stream(baseURL: base))
        let now = try await remote.respond(to: .changes(ChangesRequest(cursor: nil)), context: RequestContext())
            .changeFeedPage()
        let page = try await remote.respond(
            to: .changes(ChangesRequest(cursor: "old-3", wait: .seconds(5))), context: RequestContext()
        ).changeFeedPage()
        #expect(page.isGap)
        #expect(page.cursor != nil && page.cursor == now.cursor)
        await backend.stop()
    }

    /// The v3 API streams the same changes at `GET /v3/events`; its own mapping reads each
    /// record (`release_year` is an album's year there), and a chain following it observes a
    /// change another client makes through v2.
    @Test func theV3APIStreamsChangesThatItsMappingReads() async throws {
        let backend = try DemoBackend(bands: 5)
        let base = try #require(URL(string: "http://127.0.0.1:\(try await backend.start())"))
        let v3 = try RemoteResponder(model: backend.model, options: DemoRemoteOptions.v3(baseURL: base))
        let chain = Chain(terminal: v3) {
            ChangeFeedHandler()
            MemoryCache(model: backend.model)
        }
        let observed = ObjectContext(chain: chain, model: backend.model)
            .observe(try TestData.fetch("Album", where: "year == 1901"))
        #expect(try await Self.first(observed) { _ in true }.isEmpty)
        // The feed's stream stands where the backend stood before the save below.
        try await backend.waitForStats("the feed's stream to follow the changes") { $0.eventStreamsFollowing == 1 }
        let writer = try Self.anotherClient(of: backend)
        try writer.object(with: ObjectID(entity: "Album", key: .integer(3))).set(1901, for: "year")
        _ = try await writer.save()
        let found = try await Self.first(observed) { !$0.isEmpty }
        #expect(found.map(\.objectID) == [ObjectID(entity: "Album", key: .integer(3))])
        #expect(backend.stats.requestsByRoute["/v3/events"] == 1, "the stream is held open")
        await chain.shutdown()
        await backend.stop()
    }

    /// A context of another client of `backend`, saving through its v2 API with no caches.
    static func anotherClient(of backend: DemoBackend) throws -> ObjectContext {
        let remote = try RemoteResponder(
            model: backend.model, options: DemoRemoteOptions.v2(baseURL: try #require(backend.baseURL)))
        return ObjectContext(chain: Chain(handlers: [], terminal: remote), model: backend.model)
    }

    /// A chain following the demo's event stream while another client renames `albums`, one save
    /// each, once the stream follows the changes: the albums the chain was told of, in the order
    /// told (each event's own sorted by key).
    static func followTheStream(of backend: DemoBackend, renaming albums: [ObjectID]) async throws -> [ObjectID] {
        let base = try #require(backend.baseURL)
        let chain = Chain(
            terminal: try RemoteResponder(model: backend.model, options: DemoRemoteOptions.v2Stream(baseURL: base))
        ) {
            ChangeFeedHandler()
        }
        let events = chain.events.subscribe()
        try await backend.waitForStats("the feed's stream to follow the changes") { $0.eventStreamsFollowing == 1 }
        let writer = try anotherClient(of: backend)
        for id in albums {
            try writer.object(with: id).set("Renamed", for: "title")
            _ = try await writer.save()
        }
        var told: [ObjectID] = []
        for await event in events where event.source == "change-feed" {
            told += event.updated.sorted { $0.description < $1.description }
            if told.count >= albums.count { break }
        }
        await chain.shutdown(cancelling: true)
        return told
    }

    /// A chain following the event stream holds one connection open across 100 changes another
    /// client makes, and hands each on as it arrives: every change once, none lost.
    @Test(.timeLimit(.minutes(1)))
    func anEventStreamIsHeldOpenOneConnectionForAHundredChanges() async throws {
        let backend = try DemoBackend()
        try await backend.start()
        let albums = (1...100).map { ObjectID(entity: "Album", key: .integer($0)) }
        let told = try await Self.followTheStream(of: backend, renaming: albums)
        #expect(Set(told) == Set(albums) && told.count == albums.count)
        #expect(backend.stats.requestsByRoute["/v2/events"] == 1)
        await backend.stop()
    }

    /// A held stream that drops in the middle of an event (the demo's quirk: two whole events a
    /// connection) is followed again from the last whole event: every change once, in order.
    @Test(.timeLimit(.minutes(1)))
    func aHeldEventStreamThatDropsResumesFromTheLastWholeEvent() async throws {
        let backend = try DemoBackend(bands: 5, quirks: DemoQuirks(dropEventStreamAfter: 2))
        try await backend.start()
        let albums = (1...5).map { ObjectID(entity: "Album", key: .integer($0)) }
        #expect(try await Self.followTheStream(of: backend, renaming: albums) == albums)
        #expect(backend.stats.requestsByRoute["/v2/events"] == 3, "two whole events a connection, then the drop")
        await backend.stop()
    }

    /// A burst of 10,000 events is read in parts of about 1 MiB (`EventStreamRead.maxBytes`), so
    /// memory stays bounded however far behind the feed is, and every change arrives once, in
    /// order, each part resuming after the last whole event of the one before.
    @Test(.timeLimit(.minutes(1)))
    func aBurstOfTenThousandEventsIsReadInBoundedPartsInOrder() async throws {
        let backend = try DemoBackend(bands: 5)
        let root = try #require(URL(string: "http://127.0.0.1:\(try await backend.start())"))
        var options = DemoRemoteOptions.v2(baseURL: root)
        options.baseURL = root
        options.changes = RemoteChangesOptions(
            request: "GET /bad/event-burst?count=10000", format: .eventStream, entity: "type", operation: "op")
        let remote = try RemoteResponder(model: backend.model, options: options)
        var cursor = "0"
        var keys: [Int] = []
        var largest = 0
        while keys.count < 10_000, remote.traffic.requests < 100 {
            let before = remote.traffic.bytesReceived
            let page = try await remote.respond(
                to: .changes(ChangesRequest(cursor: cursor, wait: .seconds(600))), context: RequestContext()
            ).changeFeedPage()
            largest = max(largest, remote.traffic.bytesReceived - before)
            keys += page.changes.compactMap { change in
                if case .integer(let key)? = change.id.key { Int(key) } else { nil }
            }
            cursor = try #require(page.cursor)
        }
        #expect(keys == Array(1...10_000))
        #expect(remote.traffic.requests >= 3, "2.5 MB of events in parts of about 1 MiB")
        #expect(largest <= (1 << 20) + (64 << 10), "a part is at most 1 MiB and the chunk that passed it")
        await backend.stop()
    }
}

/// The results an observation delivered: how many, and the last.
private final class Delivered: Sendable {
    let state = Mutex<(count: Int, last: [ManagedObject])>((0, []))

    func record(_ objects: [ManagedObject]) {
        state.withLock { $0 = ($0.count + 1, objects) }
    }
}
