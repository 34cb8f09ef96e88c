import Foundation
import StoreChain
import StoreChainHTTP
import StoreChainTesting
import Testing

/// The remote terminal's side of a change feed sent as server-sent events: the request it
/// sends, how events map to changes (like fetched records), where a reconnection resumes, gaps,
/// and events it cannot read.
@Suite struct RemoteEventStreamTests {
    let model: ObjectModel

    init() throws {
        model = try RemoteFixtures.model()
    }

    func responder(_ transport: StubTransport) throws -> RemoteResponder {
        try Self.responder(transport, model: model)
    }

    /// The fixture's remote with an event-stream feed at `GET /events` (`reset` events are gaps).
    static func responder(_ transport: StubTransport, model: ObjectModel) throws -> RemoteResponder {
        var options = RemoteFixtures.options()
        options.changes = RemoteChangesOptions(
            request: "GET /events", format: .eventStream, entity: "type", entityNames: ["record": "Album"],
            operation: "op", gapEvents: ["reset"])
        return try RemoteResponder(model: model, options: options, transport: transport, environment: [:])
    }

    func page(_ responder: RemoteResponder, _ request: ChangesRequest, log: CapturedLog = CapturedLog()) async throws
        -> ChangeFeedPage
    {
        let context = RequestContext(clock: SystemClock(), logger: log.logger())
        return try await responder.respond(to: .changes(request), context: context).changeFeedPage()
    }

    static func stream(_ text: String) -> TransportResponse {
        TransportResponse(status: 200, headers: ["content-type": "text/event-stream"], body: Data(text.utf8))
    }

    @Test func asksForAnEventStreamFromTheLastEventIDAndReadsItForTheWait() async throws {
        let transport = StubTransport { _ in Self.stream("id: k-3\n\n") }
        let responder = try responder(transport)
        #expect(try await page(responder, ChangesRequest(cursor: nil)).cursor == "k-3")
        #expect(try await page(responder, ChangesRequest(cursor: "k-3", wait: .seconds(25))).cursor == "k-3")
        let (first, second) = (transport.requests[0], transport.requests[1])
        #expect(first.headers["Accept"] == "text/event-stream")
        #expect(first.headers["Last-Event-ID"] == nil, "no cursor: the stream starts at its current position")
        #expect(second.headers["Last-Event-ID"] == "k-3")
        #expect(second.eventStream?.wait == .seconds(25))
        #expect(second.timeout > .seconds(25), "the read may take its wait on top of the timeout")
        #expect(second.url.absoluteString == "https://api.example/v2/events")
    }

    @Test func eachEventIsAChangeMappedLikeAFetchedRecordAndTheLastIdIsTheCursor() async throws {
        let transport = StubTransport { _ in
            Self.stream(
                """
                retry: 3000
                : keep-alive

                id: 41
                data: {"type": "album", "id": 10, "op": "update",
                data:  "record": {"album_id": 10, "title": "Things We Lost", "year": 2001, "band_id": 1}}

                id: 42
                event: delete
                data: {"type": "band", "id": "2"}

                event: ping
                data: 1700000000


                """)
        }
        let page = try await page(try responder(transport), ChangesRequest(cursor: "40"))
        #expect(page.cursor == "42")
        #expect(page.reconnectionTime == .seconds(3))
        #expect(page.changes.map(\.operation) == [.update, .delete], "the event's type names the operation")
        #expect(
            page.changes.map(\.id) == [
                ObjectID(entity: "Album", key: .integer(10)), ObjectID(entity: "Band", key: .integer(2)),
            ])
        let node = try #require(page.changes[0].node)
        #expect(node.attributes["title"] == "Things We Lost")
        #expect(node.relationships["band"] == .toOne(ObjectID(entity: "Band", key: .integer(1))))
        #expect(!page.isGap)
        #expect(page.invalidatedEntities.isEmpty, "a ping is no change")
    }

    /// A connection that drops in the middle of an event: the whole events before it are the
    /// answer and the cursor stays at the last of them, so the next request resumes there and
    /// every change arrives once.
    @Test func aDroppedConnectionResumesFromTheLastWholeEventLosingAndRepeatingNothing() async throws {
        @Sendable func event(_ number: Int) -> String {
            "id: \(number)\ndata: {\"type\": \"album\", \"id\": \(number), \"op\": \"update\"}\n\n"
        }
        let transport = StubTransport { request in
            let after = request.headers["Last-Event-ID"].flatMap { Int($0) } ?? 0
            // Two whole events after the one asked from, then half of a third.
            return Self.stream(event(after + 1) + event(after + 2) + "id: \(after + 3)\ndata: {\"type\": \"al")
        }
        let responder = try responder(transport)
        var cursor: String? = "0"
        var seen: [Int] = []
        while seen.count < 6 {
            let page = try await page(responder, ChangesRequest(cursor: cursor, wait: .seconds(25)))
            seen += page.changes.compactMap { change in
                if case .integer(let key)? = change.id.key { Int(key) } else { nil }
            }
            cursor = page.cursor
        }
        #expect(seen == [1, 2, 3, 4, 5, 6])
        #expect(transport.requests.map { $0.headers["Last-Event-ID"] } == ["0", "2", "4"])
    }

    /// An event whose data is not JSON cannot say what it changed: it is logged with its line
    /// and every entity the feed names is forgotten; the events after it still apply.
    @Test func anEventThatIsNotJSONIsLoggedWithItsLineAndForgetsWhatItMayHaveChanged() async throws {
        let transport = StubTransport { _ in
            Self.stream(
                """
                id: 1
                data: {"type": "album", "id": 10, "op": "update"}

                id: 2
                data: {"type": "album", "id":

                id: 3
                data: {"type": "playlist", "id": 1, "op": "update"}

                id: 4
                data: {"type": "album", "id": 11, "op": "update"}


                """)
        }
        let log = CapturedLog()
        let page = try await page(try responder(transport), ChangesRequest(cursor: "0"), log: log)
        #expect(page.changes.map(\.id.key) == [.integer(10), .integer(11)])
        #expect(page.invalidatedEntities == ["Album", "Band"])
        #expect(page.cursor == "4")
        #expect(log.text.contains("line 4"), "the malformed event's first line")
        #expect(log.text.contains("line 7") && log.text.contains("'playlist'"))
    }

    @Test func aGapEventOrAGapStatusIsAGap() async throws {
        let events = StubTransport { _ in
            Self.stream(
                "id: 5\ndata: {\"type\": \"album\", \"id\": 5, \"op\": \"update\"}\n\nid: k-90\nevent: reset\ndata:\n\n"
            )
        }
        let log = CapturedLog()
        let fromEvent = try await page(try responder(events), ChangesRequest(cursor: "k-1"), log: log)
        #expect(fromEvent == ChangeFeedPage(changes: [], cursor: "k-90", isGap: true))
        #expect(log.text.contains("'reset'"))
        let status = StubTransport { _ in .json(#"{"cursor": "k-91"}"#, status: 410) }
        #expect(
            try await page(try responder(status), ChangesRequest(cursor: "k-1"))
                == ChangeFeedPage(changes: [], cursor: "k-91", isGap: true))
    }

    /// A stream without ids cannot be resumed: what changed between two connections would be
    /// missed without a word, so an answer with events but no id is a gap.
    @Test func eventsWithoutIdsAreAGap() async throws {
        let transport = StubTransport { _ in
            Self.stream("data: {\"type\": \"album\", \"id\": 5, \"op\": \"update\"}\n\n")
        }
        let log = CapturedLog()
        let page = try await page(try responder(transport), ChangesRequest(cursor: nil), log: log)
        #expect(page.isGap)
        #expect(log.text.contains("without ids"))
    }
}
