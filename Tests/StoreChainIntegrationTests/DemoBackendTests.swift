import Foundation
import StoreChain
import StoreChainDemoBackend
import StoreChainHTTP
import StoreChainTesting
import Testing

/// The remote adapter against the real demo backend over HTTP on loopback.
@Suite(.serialized) struct DemoBackendTests {
    /// Starts a small backend (20 bands, ~150 albums, ~1,500 tracks) for one test.
    func withBackend(
        bands: Int = 20, quirks: DemoQuirks = .none, _ body: (DemoBackend, URL) async throws -> Void
    ) async throws {
        let backend = try DemoBackend(bands: bands, quirks: quirks)
        let port = try await backend.start()
        do {
            try await body(backend, URL(string: "http://127.0.0.1:\(port)")!)
        } catch {
            await backend.stop()
            throw error
        }
        await backend.stop()
    }

    /// What both sides must agree on: IDs in order, attribute values, to-one relationships.
    func comparable(_ result: FetchResult) -> String {
        switch result {
        case .objects(let nodes):
            nodes.map { node in
                let attributes = node.attributes.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }
                let toOne = node.relationships.filter { if case .toOne = $0.value { true } else { false } }
                    .sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value.objectIDs)" }
                return "\(node.id) \(attributes) \(toOne)"
            }.joined(separator: "\n")
        default: "\(result)"
        }
    }

    @Test func generatedFetchesMatchTheInMemoryStoreOnV1AndV2() async throws {
        try await withBackend { backend, base in
            let v1 = try RemoteResponder(model: backend.model, options: DemoRemoteOptions.v1(baseURL: base))
            let v2 = try RemoteResponder(model: backend.model, options: DemoRemoteOptions.v2(baseURL: base))
            var generator = MusicRequestGenerator(seed: 2026)
            for _ in 0..<40 {
                let request = try generator.request()
                let expected = comparable(try backend.store.fetch(request))
                #expect(
                    comparable(try await Chain(handlers: [], terminal: v1).fetch(request)) == expected, "v1: \(request)"
                )
                #expect(
                    comparable(try await Chain(handlers: [], terminal: v2).fetch(request)) == expected, "v2: \(request)"
                )
            }
            // The improved backend answers the same questions with far fewer bytes. (With no
            // cache, v2 reads a small listing whole where that takes fewer requests than one per
            // key: fewer requests for some more bytes.)
            print("workload of 40 generated fetches: v1 \(v1.traffic), v2 \(v2.traffic)")
            #expect(v2.traffic.bytesReceived * 2 < v1.traffic.bytesReceived, "v1 \(v1.traffic), v2 \(v2.traffic)")
        }
    }

    @Test func v2PushesPreciseQueriesDown() async throws {
        try await withBackend { backend, base in
            let v2 = try RemoteResponder(model: backend.model, options: DemoRemoteOptions.v2(baseURL: base))
            let chain = Chain(handlers: [], terminal: v2)
            let rue = try await chain.send(.fetch(TestData.fetch("Band", where: "name BEGINSWITH[c] 'rue'")))
            #expect(rue.info.http?.endpoint == "GET /bands/search?name={name}")
            #expect(
                try rue.fetchResult()
                    == backend.store.fetch(TestData.fetch("Band", where: "name BEGINSWITH[c] 'rue'")).withoutToMany)
            backend.resetStats()
            let tracks = try await chain.fetch(TestData.fetch("Track", where: "id IN {3, 1, 2}"))
            #expect(
                comparable(tracks)
                    == comparable(try backend.store.fetch(TestData.fetch("Track", where: "id IN {1, 2, 3}"))))
            #expect(backend.stats.requests == 1)
            #expect(backend.stats.requestsByRoute["/v2/tracks"] == 1)
        }
    }

    @Test func savesRoundTripThroughV2() async throws {
        try await withBackend { backend, base in
            let v2 = try RemoteResponder(model: backend.model, options: DemoRemoteOptions.v2(baseURL: base))
            let chain = Chain(handlers: [], terminal: v2)
            let context = ObjectContext(chain: chain, model: backend.model)
            let band = try context.insert(
                "Band",
                values: ["name": "Beach House", "country": "US", "founded": .date(ISO8601.parse("2004-01-01")!)])
            let album = try context.insert("Album", values: ["title": "Bloom", "year": 2012, "price": 11.5])
            try album.setRelated(band, for: "band")
            try await context.save()
            let bandID = band.objectID
            #expect(!bandID.isTemporary && !album.objectID.isTemporary)
            #expect(backend.store.node(for: album.objectID)?.relationships["band"] == .toOne(bandID))
            #expect(backend.store.node(for: bandID)?[attribute: "founded"] == .date(ISO8601.parse("2004-01-01")!))

            try album.set("Bloom (Deluxe)", for: "title")
            try await context.save()
            let check = ObjectContext(chain: chain, model: backend.model)
            let fetched = try await check.fetch(
                TestData.fetch(
                    "Album", where: "band.id == %d".replacingOccurrences(of: "%d", with: "\(bandID.key ?? .null)")))
            #expect(try await fetched.first?.value("title") == "Bloom (Deluxe)")

            context.delete(album)
            try await context.save()
            #expect(backend.store.node(for: album.objectID) == nil)
            let gone = try await v2.respond(to: .objectFault(album.objectID), context: chain.makeContext())
            #expect(try gone.objectNode() == nil)
        }
    }

    @Test func badBackendsGiveTypedErrors() async throws {
        try await withBackend(quirks: DemoQuirks(failEvery: 2)) { backend, base in
            var options = DemoRemoteOptions.v2(baseURL: base)
            options.entities["Band"]?.fetch = [RemoteEndpoint("GET /broken", records: "data")]
            let v2 = try RemoteResponder(model: backend.model, options: options)
            backend.setQuirks(.none)
            let broken = await #expect(throws: StoreChainError.self) {
                try await v2.respondInAChain(to: .fetch(FetchRequest(entity: "Band")), context: RequestContext())
            }
            #expect(broken?.code == .malformedJSON)
            #expect(broken?.location?.file?.hasSuffix("/v2/broken") == true)

            backend.setQuirks(DemoQuirks(failEvery: 1))
            let failing = await #expect(throws: StoreChainError.self) {
                try await v2.respondInAChain(
                    to: .objectFault(ObjectID(entity: "Track", key: 1)), context: RequestContext())
            }
            #expect(failing?.code == .backendUnavailable)
            #expect(failing?.message.hasSuffix("/v2/tracks/1 answered 500") == true)

            backend.setQuirks(DemoQuirks(rateLimitPerSecond: 1))
            _ = try? await v2.respondInAChain(
                to: .objectFault(ObjectID(entity: "Track", key: 1)), context: RequestContext())
            let limited = await #expect(throws: StoreChainError.self) {
                try await v2.respondInAChain(
                    to: .objectFault(ObjectID(entity: "Track", key: 2)), context: RequestContext())
            }
            #expect(limited?.message.hasSuffix("answered 429") == true)
        }
        let backend = try DemoBackend(bands: 2)
        let port = try await backend.start()
        await backend.stop()
        var closed = DemoRemoteOptions.v2(baseURL: URL(string: "http://127.0.0.1:\(port)")!)
        closed.timeoutSeconds = 1
        let stopped = try RemoteResponder(model: backend.model, options: closed)
        let refused = await #expect(throws: StoreChainError.self) {
            try await stopped.respondInAChain(to: .fetch(FetchRequest(entity: "Band")), context: RequestContext())
        }
        #expect(refused?.code == .transport)
    }

    @Test func gzipBodiesAreDecompressed() async throws {
        try await withBackend { backend, base in
            var options = DemoRemoteOptions.v2(baseURL: base)
            options.entities["Band"]?.fetch = [RemoteEndpoint("GET /gzipped", records: "data")]
            let v2 = try RemoteResponder(model: backend.model, options: options)
            let bands = try await v2.respondInAChain(
                to: .fetch(FetchRequest(entity: "Band")), context: RequestContext()
            )
            .fetchResult()
            guard case .objects(let nodes) = bands else { return }
            #expect(nodes.map { $0[attribute: "name"] } == ["Gzipped Band"])
        }
    }

    @Test func etagsRevalidate() async throws {
        try await withBackend(quirks: DemoQuirks(etags: true, maxAgeSeconds: 60)) { backend, base in
            let v2 = try RemoteResponder(model: backend.model, options: DemoRemoteOptions.v2(baseURL: base))
            let first = try await v2.respond(
                to: .objectFault(ObjectID(entity: "Band", key: 1)), context: RequestContext())
            let etag = try #require(first.info.http?.headers["etag"])
            #expect(first.info.http?.headers["cache-control"] == "max-age=60")
            let second = try await v2.respond(
                to: .revalidation(.objectFault(ObjectID(entity: "Band", key: 1)), Validators(etag: etag)),
                context: RequestContext())
            #expect(second.info.notModified)
        }
    }
}

extension FetchResult {
    /// The result with to-many relationships removed (a REST record carries only foreign keys).
    var withoutToMany: FetchResult {
        guard case .objects(let nodes) = self else { return self }
        return .objects(
            nodes.map { node in
                var copy = node
                copy.relationships = node.relationships.filter { if case .toOne = $0.value { true } else { false } }
                return copy
            })
    }
}

/// Random fetch requests over the music model: attributes and to-one key paths, sorts, windows.
struct MusicRequestGenerator {
    var random: SplitMix64

    init(seed: UInt64) {
        random = SplitMix64(seed: seed)
    }

    mutating func int(_ bound: Int) -> Int { Int(random.next() % UInt64(bound)) }
    mutating func pick<T>(_ options: [T]) -> T { options[int(options.count)] }

    /// A list-screen fetch: a window deep into a listing, often unfiltered or sorted the way
    /// the backend sorts, sometimes with a filter the backend cannot apply.
    mutating func windowRequest() throws -> FetchRequest {
        var request = try self.request()
        if int(2) == 0 { request.predicate = nil }
        request.sortDescriptors =
            switch (request.entity, int(3)) {
            case ("Band", 0): [FetchSortDescriptor("name")]
            case ("Band", 1): [FetchSortDescriptor("founded", ascending: false)]
            case (_, 0): []
            default: request.sortDescriptors
            }
        request.fetchOffset = int(300)
        request.fetchLimit = int(4) == 0 ? nil : 1 + int(60)
        return request
    }

    mutating func request() throws -> FetchRequest {
        let entity = pick(["Band", "Album", "Track"])
        let comparisons: [String] =
            switch entity {
            case "Band":
                [
                    "name BEGINSWITH[c] '\(pick(["rue", "the", "s", "b"]))'",
                    "country == '\(pick(["UK", "US", "IS"]))'",
                    "founded < CAST('\(1970 + int(50))-01-01', 'NSDate')", "url == nil", "name CONTAINS 'o'",
                    "id IN {\(1 + int(20)), \(1 + int(20))}",
                ]
            case "Album":
                [
                    "year >= \(1965 + int(55))", "year BETWEEN {\(1970 + int(20)), \(1990 + int(30))}",
                    "price < \(7 + int(10))",
                    "band.name BEGINSWITH[c] '\(pick(["rue", "the", "s"]))'", "band.id == \(1 + int(20))",
                    "title CONTAINS[c] '\(pick(["night", "heart", "road"]))'", "band.country == 'US'",
                ]
            default:
                [
                    "seconds > \(120 + int(300))", "album.year < \(1970 + int(50))",
                    "album.band.country == '\(pick(["UK", "US"]))'",
                    "id IN {\(1 + int(1400)), \(1 + int(1400)), \(1 + int(1400))}", "album.id == \(1 + int(140))",
                    "genre ==[c] '\(pick(["FOLK", "jazz", "Pop"]))'",
                ]
            }
        var format = pick(comparisons)
        for _ in 0..<int(2) { format += pick([" AND ", " AND ", " OR "]) + pick(comparisons) }
        let sortKeys: [String] =
            switch entity {
            case "Band": ["name", "founded", "country"]
            case "Album": ["year", "price", "title", "band.name"]
            default: ["seconds", "title", "album.year", "number"]
            }
        let sort = (0..<int(3)).map { _ in FetchSortDescriptor(pick(sortKeys), ascending: int(2) == 0) }
        return FetchRequest(
            entity: entity, predicate: try FetchPredicate(format: format), sortDescriptors: sort,
            fetchLimit: int(3) == 0 ? nil : 1 + int(20), fetchOffset: int(4),
            resultType: pick([.objects, .objects, .count, .objectIDs]))
    }
}
