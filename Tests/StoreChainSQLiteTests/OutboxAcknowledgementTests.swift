import Foundation
import StoreChain
import StoreChainSQLite
import StoreChainTesting
import Testing

/// A backend slow to answer a save: the app hears `pending` after `acknowledge-after`, the
/// exchange goes on, and its outcome is recorded when it ends.
@Suite struct OutboxAcknowledgementTests {
    let model: ObjectModel
    let backend: ScriptedBackend
    let path = outboxPath()
    let clock = ManualClock()

    init() throws {
        model = try MusicFixture.model()
        backend = try ScriptedBackend()
        backend.mode = .holding
    }

    private func slowSave(_ name: String, through chain: Chain) async throws -> (SaveResult, Node) {
        let band = newBand(name)
        let saving = Task { try await chain.send(.save(SaveChanges(inserted: [band]))).saveResult() }
        try await backend.waitForHeld(1)
        try await clock.waitForSleepers(1)
        await clock.advance(by: .milliseconds(1_999))
        #expect(backend.held == 1, "the app still waits before the acknowledgement")
        await clock.advance(by: .milliseconds(1))
        return (try await saving.value, band)
    }

    @Test func aSlowSaveIsPendingAfterTheWaitAndIsSentWhenTheBackendAnswers() async throws {
        let outbox = try OutboxHandler(model: model, options: OutboxOptions(path: path))
        let chain = Chain(handlers: [outbox], terminal: backend, clock: clock, tracing: nil)
        let events = chain.events.subscribe()
        let (first, band) = try await slowSave("Grouper", through: chain)
        #expect(first.pending == [band.id])
        #expect(backend.held == 1, "the exchange goes on")
        // A save made meanwhile would wait behind it: it is recorded and pending at once.
        let second = try await chain.send(.save(SaveChanges(inserted: [newBand("Low")]))).saveResult()
        #expect(second.isPending)
        #expect(outbox.pendingCount == 2)
        backend.mode = .up
        backend.release()
        let sent = try #require(await events.first { !$0.outbox.sent.isEmpty })
        #expect(sent.permanentIDs[band.id]?.isTemporary == false)
        try await outbox.waitForPending(atMost: 0)
        #expect(try backend.objects("Band", "name == 'Grouper' OR name == 'Low'").count == 2)
        #expect(backend.applied == 2, "each save reached the backend once")
        await chain.shutdown()
    }

    /// The backend answers the slow save 409: someone else changed the album meanwhile. As for a
    /// replay, the conflict policy settles it (`merge`: the title goes again, on the new version).
    @Test func aSlowSaveThatConflictsIsSettledByThePolicy() async throws {
        let outbox = try OutboxHandler(model: model, options: OutboxOptions(path: path, conflictPolicy: .merge))
        let chain = Chain(handlers: [outbox], terminal: backend, clock: clock, tracing: nil)
        let album = id("Album", 10)
        let saving = Task {
            try await chain.send(
                .save(SaveChanges(updated: [Node(id: album, attributes: ["title": "Mine"], version: "0")]))
            ).saveResult()
        }
        try await backend.waitForHeld(1)
        try await clock.waitForSleepers(1)
        await clock.advance(by: .seconds(2))
        #expect(try await saving.value.isPending)
        _ = try backend.store.save(SaveChanges(updated: [Node(id: album, attributes: ["year": 1999])]))
        backend.mode = .up
        backend.release()
        try await outbox.waitForPending(atMost: 0)
        let stored = backend.store.node(for: album)
        #expect(stored?[attribute: "title"] == "Mine" && stored?[attribute: "year"] == 1999)
        #expect(try await outbox.entries().isEmpty)
        #expect(backend.saves.count == 2, "refused 409 once, then sent again on the new version")
        #expect(backend.saves.last?.updated.first?.version != "0")
        await chain.shutdown()
    }

    @Test func aSlowSaveTheBackendThenRefusesIsKeptAsFailed() async throws {
        let outbox = try OutboxHandler(model: model, options: OutboxOptions(path: path))
        let chain = Chain(handlers: [outbox], terminal: backend, clock: clock, tracing: nil)
        let events = chain.events.subscribe()
        let (result, band) = try await slowSave("Grouper", through: chain)
        #expect(result.isPending)
        backend.mode = .refusing(["Band"])
        backend.release()
        let rejection = try #require(await events.first { !$0.outbox.rejected.isEmpty })
        #expect(rejection.outbox.rejected == [band.id] && rejection.outbox.rejection?.contains("422") == true)
        #expect(try await outbox.entries().map(\.state) == [.failed])
        #expect(backend.applied == 0)
        await chain.shutdown()
    }
}
