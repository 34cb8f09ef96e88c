import Foundation
import StoreChain
import StoreChainHTTP
import StoreChainTesting
import Testing

@Suite struct RemoteResponderTests {
    let model: ObjectModel

    init() throws {
        model = try RemoteFixtures.model()
    }

    func responder(
        _ transport: StubTransport, options: RemoteOptions = RemoteFixtures.options(),
        environment: [String: String] = [:]
    )
        throws -> RemoteResponder
    {
        try RemoteResponder(model: model, options: options, transport: transport, environment: environment)
    }

    func fetch(_ responder: RemoteResponder, _ request: FetchRequest) async throws -> StoreResponse {
        try await responder.respondInAChain(to: .fetch(request), context: RequestContext())
    }

    // MARK: Planner: one test per binding rule

    @Test func prefixBindingServesBeginsWithAndCaseInsensitiveComparisons() async throws {
        let transport = StubTransport { _ in .json(RemoteFixtures.bandsPage) }
        let remote = try responder(transport)
        let response = try await fetch(remote, TestData.fetch("Band", where: "name BEGINSWITH[c] 'low' AND rating > 4"))
        #expect(transport.requests.map(\.url.absoluteString) == ["https://api.example/v2/bands/search?q=low"])
        #expect(response.info.http?.endpoint == "GET /bands/search?q={name}")
        #expect(response.info.http?.pushedPredicate?.format == #"name BEGINSWITH[c] "low""#)
        #expect(response.info.exchanges == 1)
        #expect(response.info.http?.status == 200)
        // The rest (rating > 4) was applied in memory.
        #expect(try response.fetchResult().nodes.map(\.id.key) == [1])
    }

    @Test func equalityAlsoPushesToAPrefixSearch() async throws {
        let transport = StubTransport { _ in .json(RemoteFixtures.bandsPage) }
        let response = try await fetch(try responder(transport), TestData.fetch("Band", where: "name == 'Lower Dens'"))
        #expect(transport.requests.first?.url.query == "q=Lower%20Dens")
        #expect(try response.fetchResult().nodes.map(\.id.key) == [2])
    }

    @Test func diacriticInsensitiveComparisonsAreNotPushed() async throws {
        let transport = StubTransport { _ in .json(RemoteFixtures.bandsPage) }
        _ = try await fetch(try responder(transport), TestData.fetch("Band", where: "name BEGINSWITH[cd] 'low'"))
        #expect(transport.requests.first?.url.path == "/v2/bands")
    }

    @Test func caseSensitiveBackendDoesNotServeCaseInsensitiveEquality() async throws {
        let transport = StubTransport { request in
            request.url.path.hasSuffix("/albums") && request.url.path.contains("/bands/")
                ? .json(#"{"data": []}"#) : .json(#"{"data": [{"album_id": 10, "title": "X", "band_id": 1}]}"#)
        }
        _ = try await fetch(try responder(transport), TestData.fetch("Album", where: "band.id == 1"))
        #expect(transport.requests.first?.url.absoluteString == "https://api.example/v2/bands/1/albums")
    }

    @Test func rangeBindingsTakeBothEndsOfBetweenAndStrictComparisons() async throws {
        let transport = StubTransport { _ in .json(#"{"data": []}"#) }
        let remote = try responder(transport)
        _ = try await fetch(remote, TestData.fetch("Album", where: "year BETWEEN {1990, 1999}"))
        _ = try await fetch(remote, TestData.fetch("Album", where: "year > 2000 AND year < 2010"))
        #expect(transport.requests.map(\.url.query) == ["from=1990&to=1999", "from=2000&to=2010"])
    }

    @Test func listBindingTakesINAndEquality() async throws {
        let transport = StubTransport { _ in .json(#"{"data": []}"#) }
        let remote = try responder(transport)
        _ = try await fetch(remote, TestData.fetch("Album", where: "id IN {3, 1, 2}"))
        _ = try await fetch(remote, TestData.fetch("Album", where: "id == 7"))
        #expect(transport.requests.map(\.url.query) == ["ids=3%2C1%2C2", "ids=7"])
    }

    @Test func sortBindingIsUsedWhenTheBackendSupportsTheKey() async throws {
        let transport = StubTransport { _ in .json(RemoteFixtures.bandsPage) }
        let remote = try responder(transport)
        let response = try await fetch(
            remote, TestData.fetch("Band", sort: [FetchSortDescriptor("name", ascending: false)]))
        #expect(transport.requests.first?.url.query == "sort=-name")
        #expect(try response.fetchResult().nodes.map(\.id.key) == [2, 1])
        _ = try await fetch(remote, TestData.fetch("Band", sort: [FetchSortDescriptor("founded")]))
        #expect(transport.requests.last?.url.query == nil)
    }

    @Test func noEndpointListsWhatWasConsidered() async throws {
        var options = RemoteFixtures.options()
        options.entities["Album"]?.fetch.removeLast()
        let error = await #expect(throws: StoreChainError.self) {
            try await fetch(
                try responder(StubTransport { _ in .status(500) }, options: options),
                TestData.fetch("Album", where: "year > 1"))
        }
        #expect(error?.code == .noEndpoint)
        #expect(
            error?.message.contains("GET /bands/{band}/albums: {band} needs a comparison on 'band.id' (equal)") == true)
    }

    // MARK: Mapping

    @Test func mapsNestedRenamedAndConvertedFieldsAndEmbeddedRecords() async throws {
        let transport = StubTransport { _ in .json(RemoteFixtures.bandsPage) }
        let request = FetchRequest(
            entity: "Band", sortDescriptors: [FetchSortDescriptor("name")],
            relationshipKeyPathsForPrefetching: ["albums"])
        let response = try await fetch(try responder(transport), request)
        let bands = try response.fetchResult().nodes
        #expect(bands[0][attribute: "founded"] == .date(Date(timeIntervalSince1970: 757_382_400)))
        #expect(bands[0][attribute: "rating"] == 4.5)
        #expect(bands[1].id == ObjectID(entity: "Band", key: 2))
        #expect(bands[1][attribute: "founded"] == .date(ISO8601.parse("2010-01-01")!))
        #expect(bands[0].relationships["albums"] == .toMany([ObjectID(entity: "Album", key: 10)]))
        #expect(response.related.map(\.id) == [ObjectID(entity: "Album", key: 10)])
        #expect(response.related.first?.relationships["band"] == .toOne(ObjectID(entity: "Band", key: 1)))
    }

    @Test func badRecordsFailWithTheJSONPathOrAreSkippedAndCounted() async throws {
        let body =
            #"{"data": {"items": [{"id": 1, "attributes": {"name": "Low"}}, {"id": 2, "attributes": {}}, {"id": "x", "attributes": {"name": "Y"}}]}}"#
        let transport = StubTransport { _ in .json(body) }
        let error = await #expect(throws: StoreChainError.self) {
            try await fetch(try responder(transport), FetchRequest(entity: "Band"))
        }
        #expect(error?.code == .badRecord)
        #expect(error?.location?.path == "https://api.example/v2/bands $.data.items[1].attributes.name")
        #expect(error?.message.contains("required field 'attributes.name'") == true)

        var options = RemoteFixtures.options()
        options.badRecords = .skip
        let response = try await fetch(try responder(transport, options: options), FetchRequest(entity: "Band"))
        #expect(try response.fetchResult().nodes.map(\.id.key) == [1])
        #expect(response.info.skippedRecords == 2)
    }

    // MARK: Errors a backend deserves

    @Test func httpErrorsNameStatusMethodURLAndBodyStart() async throws {
        let transport = StubTransport { _ in .json(#"{"error": "database on fire"}"#, status: 503) }
        let error = await #expect(throws: StoreChainError.self) {
            try await fetch(try responder(transport), FetchRequest(entity: "Band"))
        }
        #expect(error?.code == .backendUnavailable)
        #expect(error?.status == 503)
        #expect(error?.message == "GET https://api.example/v2/bands answered 503")
        #expect(error?.detail == #"body starts: {"error": "database on fire"}"#)
        #expect(error?.suggestion?.contains("retry later") == true)
    }

    /// The one place a status gets its meaning: what the core's retry, rate limit, stale-if-error
    /// and outbox decide by. A save keeps it too (a conflict is not a plain refusal).
    @Test(arguments: [
        (400, StoreChainError.httpStatus, StoreChainError.saveFailed), (404, .httpStatus, .saveFailed),
        (422, .httpStatus, .saveFailed), (409, .conflict, .conflict), (412, .conflict, .conflict),
        (429, .rateLimited, .rateLimited), (408, .backendUnavailable, .backendUnavailable),
        (500, .backendUnavailable, .backendUnavailable), (503, .backendUnavailable, .backendUnavailable),
    ])
    func anErrorStatusIsTheCodeItMeans(status: Int, fetchCode: StoreChainError.Code, saveCode: StoreChainError.Code)
        async throws
    {
        let remote = try responder(StubTransport { _ in .json(#"{"error": "no"}"#, status: status) })
        let fetchError = await #expect(throws: StoreChainError.self) {
            try await fetch(remote, FetchRequest(entity: "Band"))
        }
        #expect(fetchError?.code == fetchCode)
        #expect(fetchError?.status == status)
        #expect(fetchError?.isTransient == [408, 429, 500, 503].contains(status))
        #expect(fetchError?.isConflict == [409, 412].contains(status))
        let update = Node(id: ObjectID(entity: "Band", key: 1), attributes: ["name": "Renamed"])
        let saveError = await #expect(throws: StoreChainError.self) {
            try await remote.respondInAChain(to: .save(SaveChanges(updated: [update])), context: RequestContext())
        }
        #expect(saveError?.code == saveCode)
    }

    @Test func malformedJSONNamesTheURLAndOffset() async throws {
        let transport = StubTransport { _ in .json(#"{"data": {"items": [{"id": 1,,}]}}"#) }
        let error = await #expect(throws: StoreChainError.self) {
            try await fetch(try responder(transport), FetchRequest(entity: "Band"))
        }
        #expect(error?.code == .malformedJSON)
        #expect(error?.location?.file == "https://api.example/v2/bands")
        #expect(error?.location?.offset == 29)
    }

    @Test func aRetryAfterDateCountsFromTheBackendsOwnDate() async throws {
        let busy = StubTransport { _ in
            .status(
                503,
                headers: ["Date": "Sun, 06 Nov 1994 08:49:37 GMT", "Retry-After": "Sun, 06 Nov 1994 08:51:37 GMT"])
        }
        let error = await #expect(throws: StoreChainError.self) {
            try await fetch(try responder(busy), FetchRequest(entity: "Band"))
        }
        #expect(error?.retryAfter == .seconds(120), "whatever the local clock says")
        let seconds = StubTransport { _ in .status(429, headers: ["Retry-After": "7"]) }
        let limited = await #expect(throws: StoreChainError.self) {
            try await fetch(try responder(seconds), FetchRequest(entity: "Band"))
        }
        #expect(limited?.retryAfter == .seconds(7))
    }

    @Test func timeoutsAndRefusedConnectionsAreTypedErrors() async throws {
        let timeout = StubTransport { request in throw RemoteError.timedOut(request) }
        let late = await #expect(throws: StoreChainError.self) {
            try await fetch(try responder(timeout), FetchRequest(entity: "Band"))
        }
        #expect(late?.code == .timedOut)
        // A real connection to a port nobody listens on.
        var options = RemoteFixtures.options()
        options.baseURL = URL(string: "http://127.0.0.1:9/v2")!
        options.timeoutSeconds = 1
        let refused = try RemoteResponder(model: model, options: options)
        let error = await #expect(throws: StoreChainError.self) {
            try await fetch(refused, FetchRequest(entity: "Band"))
        }
        #expect(error?.code == .transport)
        #expect(error?.message == "GET http://127.0.0.1:9/v2/bands failed before an answer")
        #expect(refused.traffic.requests == 1, "an exchange that failed still counts (storechain query --stats)")
    }

    /// The reported case: with the backend down, an offline save was acknowledged after 10 s,
    /// AsyncHTTPClient retrying the refused connection inside the client until its connect
    /// timeout. The default client fails the request at once; the chain's retry handler retries
    /// (with backoff, logged), and an outbox acknowledges the save as pending.
    @Test func theDefaultClientLeavesRetryingConnectionsToTheChain() {
        #expect(AsyncHTTPClientTransport.defaultConfiguration.connectionPool.retryConnectionEstablishment == false)
    }

    @Test func bearerTokenIsSentButNeverShown() async throws {
        var options = RemoteFixtures.options()
        options.bearerTokenVariable = "MUSIC_TOKEN"
        #expect(throws: StoreChainError.self) { try responder(StubTransport { _ in .status(200) }, options: options) }
        let transport = StubTransport { _ in .json(#"{"error": "nope"}"#, status: 401) }
        let remote = try responder(transport, options: options, environment: ["MUSIC_TOKEN": "s3cr3t-value"])
        let error = await #expect(throws: StoreChainError.self) {
            try await fetch(remote, FetchRequest(entity: "Band"))
        }
        #expect(transport.requests.first?.headers["Authorization"] == "Bearer s3cr3t-value")
        #expect(error?.description.contains("s3cr3t") == false)
        #expect(error?.suggestion?.contains("credentials") == true)
    }

    // MARK: Faults, metadata, validators

    @Test func objectFaultUsesGetAnd404MeansGone() async throws {
        let transport = StubTransport { request in
            request.url.path == "/v2/bands/1"
                ? .json(
                    #"{"id": 1, "attributes": {"name": "Low"}}"#,
                    headers: ["ETag": "\"v1\"", "Cache-Control": "max-age=60"])
                : .status(404)
        }
        let remote = try responder(transport)
        let found = try await remote.respondInAChain(
            to: .objectFault(ObjectID(entity: "Band", key: 1)), context: RequestContext())
        #expect(try found.objectNode()?[attribute: "name"] == "Low")
        #expect(found.info.http?.headers["etag"] == "\"v1\"")
        #expect(found.info.http?.headers["cache-control"] == "max-age=60")
        let gone = try await remote.respondInAChain(
            to: .objectFault(ObjectID(entity: "Band", key: 2)), context: RequestContext())
        #expect(try gone.objectNode() == nil)
    }

    /// Called on its own, the terminal makes the one exchange a fault needs, but a whole fetch
    /// (pages, related objects) is the chain's work: it is refused with what to do, and nothing
    /// is sent; it never builds a chain of its own.
    @Test func onItsOwnTheTerminalAnswersOneExchangeAndRefusesAWholeFetch() async throws {
        let transport = StubTransport { _ in .json(#"{"id": 1, "attributes": {"name": "Low"}}"#) }
        let remote = try responder(transport)
        let fault = try await remote.respond(
            to: .objectFault(ObjectID(entity: "Band", key: 1)), context: RequestContext())
        #expect(try fault.objectNode()?[attribute: "name"] == "Low")
        let error = await #expect(throws: StoreChainError.self) {
            try await remote.respond(to: .fetch(FetchRequest(entity: "Band")), context: RequestContext())
        }
        #expect(error?.code == .invalidRequest)
        #expect(error?.suggestion?.contains("through a Chain") == true)
        #expect(transport.requests.count == 1)
    }

    /// `X-RateLimit-Remaining` / `X-RateLimit-Reset` become a typed `RateLimitStatus` (epoch
    /// seconds or seconds from now), on gets and on listings; headers that do not read as
    /// numbers give none, and never a crash.
    @Test func rateLimitHeadersBecomeATypedStatus() async throws {
        let headers = Locked(["X-RateLimit-Remaining": "7", "X-RateLimit-Reset": "1767225600"])
        let transport = StubTransport { request in
            request.url.path == "/v2/bands/1"
                ? .json(#"{"id": 1, "attributes": {"name": "Low"}}"#, headers: headers.withLock { $0 })
                : .json(RemoteFixtures.bandsPage, headers: headers.withLock { $0 })
        }
        let remote = try responder(transport)
        let band = ObjectID(entity: "Band", key: 1)
        let epoch = try await remote.respondInAChain(to: .objectFault(band), context: RequestContext())
        #expect(
            epoch.info.rateLimit
                == RateLimitStatus(remaining: 7, reset: .at(Date(timeIntervalSince1970: 1_767_225_600))))
        headers.withLock { $0 = ["X-RateLimit-Remaining": "0", "X-RateLimit-Reset": "30"] }
        let listing = try await fetch(remote, FetchRequest(entity: "Band"))
        #expect(listing.info.rateLimit == RateLimitStatus(remaining: 0, reset: .after(.seconds(30))))
        for bad in [
            ["X-RateLimit-Remaining": "inf", "X-RateLimit-Reset": "30"],
            ["X-RateLimit-Remaining": "2.5", "X-RateLimit-Reset": "30"],
            ["X-RateLimit-Remaining": "2", "X-RateLimit-Reset": "soon"],
        ] {
            headers.withLock { $0 = bad }
            let answer = try await remote.respondInAChain(to: .objectFault(band), context: RequestContext())
            #expect(answer.info.rateLimit == nil, "\(bad)")
        }
    }

    /// Found by the remote-records fuzzer: the other object's data came back under the asked ID.
    @Test func aGetAnsweringAnotherObjectIsAnErrorNotThatObject() async throws {
        let transport = StubTransport { _ in .json(#"{"id": 2, "attributes": {"name": "Low"}}"#) }
        let error = await #expect(throws: StoreChainError.self) {
            try await self.responder(transport).respondInAChain(
                to: .objectFault(ObjectID(entity: "Band", key: 1)), context: RequestContext())
        }
        #expect(error?.code == .badRecord)
        #expect(error?.message == "asked for Band/1, the backend answered with Band/2")
        #expect(error?.location?.path == "https://api.example/v2/bands/1 $.id")
    }

    @Test func validatorsAreSentAnd304IsNotModified() async throws {
        let transport = StubTransport { request in
            request.headers["If-None-Match"] == "\"v1\""
                ? .status(304, headers: ["ETag": "\"v1\""]) : .json(RemoteFixtures.bandsPage)
        }
        let validators = Validators(etag: "\"v1\"", lastModified: "Wed, 21 Oct 2026 07:28:00 GMT")
        let response = try await responder(transport).respondInAChain(
            to: .revalidation(.fetch(FetchRequest(entity: "Band")), validators), context: RequestContext())
        #expect(response.info.notModified)
        #expect(transport.requests.first?.headers["If-Modified-Since"] == "Wed, 21 Oct 2026 07:28:00 GMT")
        let plain = try await responder(transport).respondInAChain(
            to: .fetch(FetchRequest(entity: "Band")), context: RequestContext())
        #expect(!plain.info.notModified)
        #expect(transport.requests.last?.headers["If-None-Match"] == nil, "a fetch is never conditional")
    }

    @Test func relationshipFaultsUseForeignKeysAndInverseEndpoints() async throws {
        let transport = StubTransport { request in
            switch request.url.path {
            case "/v2/bands/1/albums":
                .json(
                    #"{"data": [{"album_id": 10, "title": "A", "band_id": 1}, {"album_id": 11, "title": "B", "band_id": 1}]}"#
                )
            case "/v2/albums": .json(#"{"data": [{"album_id": 10, "title": "A", "band_id": 1}]}"#)
            case "/v2/bands/1": .json(#"{"id": 1, "attributes": {"name": "Low"}}"#)
            default: .status(404)
            }
        }
        var options = RemoteFixtures.options()
        options.entities["Band"]?.relationships = [:]
        let remote = try responder(transport, options: options)
        let albums = try await remote.respondInAChain(
            to: .relationshipFault(ObjectID(entity: "Band", key: 1), relationship: "albums"), context: RequestContext())
        #expect(
            try albums.relationshipValue()
                == .toMany([ObjectID(entity: "Album", key: 10), ObjectID(entity: "Album", key: 11)]))
        #expect(albums.related.count == 2)
        let band = try await remote.respondInAChain(
            to: .relationshipFault(ObjectID(entity: "Album", key: 10), relationship: "band"), context: RequestContext())
        #expect(try band.relationshipValue() == .toOne(ObjectID(entity: "Band", key: 1)))
        #expect(band.related.first?[attribute: "name"] == "Low")
    }

    // MARK: Saves

    @Test func savesInsertParentsFirstThenUpdateAndDelete() async throws {
        let transport = StubTransport { request in
            let body = request.body.map { String(decoding: $0, as: UTF8.self) } ?? ""
            switch (request.method, request.url.path) {
            case ("POST", "/v2/bands"): return .json(#"{"id": 7, "attributes": {"name": "New"}}"#, status: 201)
            case ("POST", "/v2/albums"):
                #expect(body.contains(#""band_id":7"#))
                return .json(#"{"album_id": 70, "title": "First", "band_id": 7}"#, status: 201)
            case ("PATCH", "/v2/bands/1"):
                #expect(body == #"{"attributes":{"founded_at":"2001-01-01T00:00:00Z"}}"#)
                return .json(#"{"id": 1, "attributes": {"name": "Low", "founded_at": 978307200}}"#)
            case ("DELETE", "/v2/bands/2"): return .status(404)
            default: return .status(500)
            }
        }
        let band = Node(id: .temporary(entity: "Band"), attributes: ["name": "New"])
        let album = Node(
            id: .temporary(entity: "Album"), attributes: ["title": "First"], relationships: ["band": .toOne(band.id)])
        let changes = SaveChanges(
            inserted: [album, band],
            updated: [
                Node(id: ObjectID(entity: "Band", key: 1), attributes: ["founded": .date(ISO8601.parse("2001-01-01")!)])
            ],
            deleted: [ObjectID(entity: "Band", key: 2)])
        let result = try await responder(transport).respondInAChain(to: .save(changes), context: RequestContext())
            .saveResult()
        #expect(
            result.permanentIDs == [
                band.id: ObjectID(entity: "Band", key: 7), album.id: ObjectID(entity: "Album", key: 70),
            ])
        #expect(
            transport.requests.map { "\($0.method) \($0.url.path)" } == [
                "POST /v2/bands", "POST /v2/albums", "PATCH /v2/bands/1", "DELETE /v2/bands/2",
            ])
    }

    @Test func aFailedSaveSaysWhichObjectAndWhatWasDone() async throws {
        let transport = StubTransport { request in
            request.url.path == "/v2/bands"
                ? .json(#"{"id": 7, "attributes": {"name": "New"}}"#, status: 201)
                : .json(#"{"error": "title taken"}"#, status: 422)
        }
        let band = Node(id: .temporary(entity: "Band"), attributes: ["name": "New"])
        let album = Node(
            id: .temporary(entity: "Album"), attributes: ["title": "X"], relationships: ["band": .toOne(band.id)])
        let error = await #expect(throws: StoreChainError.self) {
            try await responder(transport).respondInAChain(
                to: .save(SaveChanges(inserted: [band, album])), context: RequestContext())
        }
        #expect(error?.code == .saveFailed)
        #expect(error?.message.contains("saving \(album.id): POST https://api.example/v2/albums answered 422") == true)
        #expect(error?.message.contains("already saved: \(band.id) as Band/7") == true)
    }

    @Test func mappingThatDoesNotFitTheModelIsRejectedUpFront() throws {
        var options = RemoteFixtures.options()
        options.entities["Band"]?.attributes["nmae"] = "x"
        let error = #expect(throws: StoreChainError.self) {
            try responder(StubTransport { _ in .status(200) }, options: options)
        }
        #expect(error?.suggestion == "did you mean 'name'?")
    }

    // MARK: Where it runs

    /// An app fetches from the main actor; the exchange and the parsing and mapping of its
    /// answer run elsewhere, and the answer comes back to the main actor.
    @MainActor @Test func anExchangeAndItsParsingRunOffTheMainActor() async throws {
        MainQueueProbe.mark()
        let onMain = Locked<[Bool]>([])
        let transport = StubTransport { _ in
            onMain.withLock { $0.append(MainQueueProbe.isCurrent) }
            return .json(RemoteFixtures.bandsPage)
        }
        let chain = Chain(terminal: try responder(transport)) {}
        #expect(MainQueueProbe.isCurrent)
        let response = try await chain.send(.fetch(TestData.fetch("Band")))
        #expect(MainQueueProbe.isCurrent, "the answer comes back to the main actor")
        #expect(onMain.withLock { $0 } == [false])
        #expect(try response.fetchResult().nodes.map(\.id.key) == [1, 2])
    }
}

extension FetchResult {
    /// The nodes of an objects result.
    var nodes: [Node] {
        if case .objects(let nodes) = self { return nodes }
        return []
    }
}
