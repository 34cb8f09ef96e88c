import Foundation
import StoreChain
import StoreChainHTTP
import StoreChainTesting
import Testing

/// The remote terminal's side of a change feed: the request it sends, how a changes answer maps
/// (like fetched records), gaps, and changes it cannot read.
@Suite struct RemoteChangesTests {
    let model: ObjectModel

    init() throws {
        model = try RemoteFixtures.model()
    }

    func responder(_ transport: StubTransport, changes: RemoteChangesOptions? = nil) throws -> RemoteResponder {
        var options = RemoteFixtures.options()
        options.changes =
            changes
            ?? RemoteChangesOptions(
                request: "GET /changes?since={cursor}&wait={wait}", entity: "type", entityNames: ["record": "Album"],
                operation: "op")
        return try RemoteResponder(model: model, options: options, transport: transport, environment: [:])
    }

    func page(_ responder: RemoteResponder, _ request: ChangesRequest, log: CapturedLog = CapturedLog()) async throws
        -> ChangeFeedPage
    {
        let context = RequestContext(clock: SystemClock(), logger: log.logger())
        return try await responder.respond(to: .changes(request), context: context).changeFeedPage()
    }

    @Test func asksFromTheCursorWithTheWaitAndLeavesBothOutForTheCurrentPosition() async throws {
        let transport = StubTransport { _ in .json(#"{"changes": [], "cursor": "k-7"}"#) }
        let responder = try responder(transport)
        let first = try await page(responder, ChangesRequest(cursor: nil))
        #expect(first == ChangeFeedPage(changes: [], cursor: "k-7"))
        _ = try await page(responder, ChangesRequest(cursor: "k 7&x", wait: .seconds(25)))
        #expect(
            transport.requests.map(\.url.absoluteString) == [
                "https://api.example/v2/changes", "https://api.example/v2/changes?since=k%207%26x&wait=25",
            ])
        #expect(transport.requests[1].timeout > .seconds(30), "a long poll may take its wait on top of the timeout")
    }

    @Test func mapsEachChangeAndItsRecordLikeAFetchedRecord() async throws {
        let transport = StubTransport { _ in
            .json(
                #"""
                {"changes": [
                  {"type": "album", "id": 10, "op": "updated",
                   "record": {"album_id": 10, "title": "Things We Lost", "year": 2001, "band_id": 1}},
                  {"type": "Band", "id": "2", "op": "delete"},
                  {"type": "record", "id": 11, "op": "create", "record": null}
                ], "cursor": 42}
                """#)
        }
        let page = try await page(try responder(transport), ChangesRequest(cursor: "41"))
        let album10 = ObjectID(entity: "Album", key: .integer(10))
        #expect(page.cursor == "42")
        #expect(page.changes.map(\.operation) == [.update, .delete, .insert])
        #expect(
            page.changes.map(\.id) == [
                album10, ObjectID(entity: "Band", key: .integer(2)), ObjectID(entity: "Album", key: .integer(11)),
            ])
        let node = try #require(page.changes[0].node)
        #expect(node.attributes["title"] == "Things We Lost")
        #expect(node.relationships["band"] == .toOne(ObjectID(entity: "Band", key: .integer(1))))
        #expect(page.changes[2].node == nil)
    }

    @Test func aGapStatusIsAGapWithTheCursorItGives() async throws {
        let transport = StubTransport { _ in .json(#"{"error": "too old", "cursor": "k-90"}"#, status: 410) }
        let page = try await page(try responder(transport), ChangesRequest(cursor: "k-1"))
        #expect(page == ChangeFeedPage(changes: [], cursor: "k-90", isGap: true))
    }

    /// A change whose entity is unknown is skipped with its JSON path in the log; one of a known
    /// entity whose key or operation cannot be read invalidates that entity (nothing it may have
    /// changed stays cached); a record that does not map leaves the change without a state.
    @Test func changesThatCannotBeReadAreLoggedWithTheirPathAndNothingIsLost() async throws {
        let transport = StubTransport { _ in
            .json(
                #"""
                {"changes": [
                  {"type": "album", "id": 10, "op": "update"},
                  {"type": "playlist", "id": 5, "op": "update"},
                  {"type": "band", "op": "update"},
                  {"type": "album", "id": 11, "op": "renamed"},
                  {"type": "album", "id": 12, "op": "insert", "record": {"album_id": 12}},
                  7
                ], "cursor": "9"}
                """#)
        }
        let log = CapturedLog()
        let page = try await page(try responder(transport), ChangesRequest(cursor: "8"), log: log)
        #expect(page.changes.map(\.id.key) == [.integer(10), .integer(12)])
        #expect(page.changes[1].node == nil, "the record lacks the required title")
        #expect(page.invalidatedEntities == ["Band", "Album"])
        for index in 1...3 { #expect(log.text.contains("$.changes[\(index)]")) }
        #expect(log.text.contains("$.changes[5]"))
        #expect(log.text.contains("'playlist'"))
        #expect(page.event(source: "test").entities == ["Album", "Band"])
    }

    @Test func anAnswerWithoutItsListOrCursorIsAnErrorThatSaysWhere() async throws {
        for body in [#"{"cursor": "1"}"#, #"{"changes": []}"#] {
            let transport = StubTransport { _ in .json(body) }
            let error = try await #require(throws: StoreChainError.self) {
                try await page(try responder(transport), ChangesRequest(cursor: "0"))
            }
            #expect(error.code == .badRecord)
            #expect(error.location?.path == "https://api.example/v2/changes?since=0")
        }
    }

    @Test func aResponderWithoutAFeedSaysSo() async throws {
        var options = RemoteFixtures.options()
        options.changes = nil
        let responder = try RemoteResponder(
            model: model, options: options, transport: StubTransport { _ in .status(500) }, environment: [:])
        let error = try await #require(throws: StoreChainError.self) {
            try await page(responder, ChangesRequest(cursor: nil))
        }
        #expect(error.code == .noEndpoint)
    }

    @Test func aFeedMappingToAnEntityTheModelLacksIsRefusedWhereItIsWritten() throws {
        var options = RemoteFixtures.options()
        options.changes = RemoteChangesOptions(request: "GET /changes", entityNames: ["album": "Albun"])
        let problems = RemoteResponder.problems(in: options, model: model)
        #expect(problems.map(\.location?.path) == ["changes.entity-names.album"])
        #expect(problems.first?.suggestion?.contains("Album") == true)
    }
}
