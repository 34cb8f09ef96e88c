import Foundation
import StoreChain
import StoreChainSQLite
import StoreChainTesting
import Testing

/// Waiting updates of objects an earlier waiting update already changes go to the backend in
/// one request when the outbox replays, with the same end state.
@Suite struct OutboxCoalescingTests {
    let model: ObjectModel
    let backend: ScriptedBackend
    let path = outboxPath()

    init() throws {
        model = try MusicFixture.model()
        backend = try ScriptedBackend()
    }

    func album(_ key: Int, _ attributes: AttributeValues) -> SaveChanges {
        SaveChanges(updated: [Node(id: ObjectID(entity: "Album", key: .integer(key)), attributes: attributes)])
    }

    /// Five updates made while the backend is down: three of album 10, one of album 11, one
    /// more of album 10 (which can join the first three: album 11's update is independent).
    func holdUpdates(coalescing: Bool) async throws -> (OutboxHandler, Chain) {
        backend.mode = .down
        let outbox = try OutboxHandler(
            model: model,
            options: OutboxOptions(path: path, retryDelay: .seconds(3600), coalescesUpdates: coalescing))
        let chain = Chain(handlers: [outbox], terminal: backend, clock: ManualClock(), tracing: nil)
        for changes in [
            album(10, ["title": "A"]), album(10, ["year": 2001]), album(10, ["title": "B", "price": nil]),
            album(11, ["title": "X"]), album(10, ["year": 2002]),
        ] {
            #expect(try await chain.send(.save(changes)).saveResult().isPending)
        }
        return (outbox, chain)
    }

    func expectEndState() {
        let ten = backend.store.node(for: ObjectID(entity: "Album", key: .integer(10)))
        #expect(ten?[attribute: "title"] == "B" && ten?[attribute: "year"] == 2002)
        #expect(ten?.attributes["price"] == nil)
        #expect(backend.store.node(for: ObjectID(entity: "Album", key: .integer(11)))?[attribute: "title"] == "X")
    }

    @Test func updatesOfTheSameObjectGoAsOneRequestWithTheSameEndState() async throws {
        let (outbox, chain) = try await holdUpdates(coalescing: true)
        let attemptsWhileDown = backend.attempts
        let events = chain.events.subscribe()
        backend.mode = .up
        #expect(try await chain.sync() == 0)
        // Album 10's four updates in one request (the cleared price still cleared), album 11's
        // beside it: the saves of album 11 and album 10 do not depend on each other.
        let saves = backend.saves
        #expect(saves.count == 2 && backend.attempts - attemptsWhileDown == 2)
        let ten = try #require(saves.first { $0.updated.first?.id == ObjectID(entity: "Album", key: .integer(10)) })
        #expect(ten.updated.count == 1 && ten.updated[0].attributes["price"] == .null)
        #expect(ten.idempotencyKey?.contains("+3-") == true)
        expectEndState()
        #expect(try await outbox.entries().isEmpty)
        // Still one event per save, so a context counting pending saves per object settles.
        var iterator = events.makeAsyncIterator()
        for _ in 0..<5 { #expect(try #require(await iterator.next()).outbox.sent.count == 1) }
    }

    @Test func withCoalescingOffEachSaveIsItsOwnRequest() async throws {
        let (_, chain) = try await holdUpdates(coalescing: false)
        backend.mode = .up
        #expect(try await chain.sync() == 0)
        #expect(backend.saves.count == 5)
        expectEndState()
    }

    @Test func aCombinedRequestWhoseAnswerWasLostIsRepeatedWithTheSameKey() async throws {
        let (outbox, chain) = try await holdUpdates(coalescing: true)
        backend.mode = .losingAnswers
        #expect(try await chain.sync() == 5)
        backend.mode = .up
        #expect(try await chain.sync() == 0)
        // The combined request went again with its key, and was applied once.
        let combined = backend.saves.filter { $0.idempotencyKey?.contains("+3-") == true }
        #expect(combined.count == 2 && combined[0].idempotencyKey == combined[1].idempotencyKey)
        #expect(backend.applied == 2)
        expectEndState()
        #expect(try await outbox.entries().isEmpty)
    }

    @Test func aCombinedRequestTheBackendRefusesIsSentAgainOneSaveAtATime() async throws {
        let (outbox, chain) = try await holdUpdates(coalescing: true)
        backend.mode = .refusing(["Album"])
        #expect(try await chain.sync() == 0)
        // The combined request, then each of its four saves alone; album 11's alone.
        let combined = backend.saves.filter { $0.idempotencyKey?.contains("+") == true }
        #expect(backend.saves.count == 6 && combined.count == 1)
        let entries = try await outbox.entries()
        #expect(entries.count == 5 && entries.allSatisfy { $0.state == .failed })
    }
}
