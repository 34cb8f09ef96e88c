import Foundation
import StoreChain
import StoreChainSQLite
import StoreChainTesting
import Testing

/// The outbox: saves are recorded before they go on, acknowledged as pending while the backend
/// is out of reach, and replayed in order, exactly once, with temporary IDs remapped.
@Suite struct OutboxHandlerTests {
    let model: ObjectModel
    let backend: ScriptedBackend
    let path = outboxPath()

    init() throws {
        model = try MusicFixture.model()
        backend = try ScriptedBackend()
    }

    func chain(_ outbox: OutboxHandler, clock: any StoreClock = ManualClock()) -> Chain {
        Chain(handlers: [outbox], terminal: backend, clock: clock, tracing: nil)
    }

    @Test func aSaveTheBackendTakesGoesThroughAndLeavesNothingBehind() async throws {
        let outbox = try OutboxHandler(model: model, options: OutboxOptions(path: path))
        let band = newBand("Grouper")
        let result = try await chain(outbox).send(.save(SaveChanges(inserted: [band]))).saveResult()
        #expect(!result.isPending)
        #expect(result.permanentIDs[band.id]?.isTemporary == false)
        #expect(try await outbox.entries().isEmpty)
        // It was sent with an idempotency key, as every recorded save is.
        #expect(backend.saves.count == 1 && backend.saves[0].idempotencyKey != nil)
    }

    @Test func aSaveWhileTheBackendIsDownIsPendingAndSurvivesARestart() async throws {
        backend.mode = .down
        let band = newBand("Grouper")
        let update = Node(id: id("Album", 10), attributes: ["year": 2011])
        do {
            let outbox = try OutboxHandler(model: model, options: OutboxOptions(path: path))
            let response = try await chain(outbox).send(
                .save(SaveChanges(inserted: [band], updated: [update], deleted: [id("Track", 300)])))
            let result = try response.saveResult()
            #expect(result.pending == [band.id, update.id, id("Track", 300)])
            #expect(result.permanentIDs.isEmpty && result.nodes == [band])
            #expect(response.info.origin == .outbox)
            #expect(outbox.pendingCount == 1)
        }
        // A new process opens the same file: the save is still there, attempted once.
        let reopened = try OutboxHandler(model: model, options: OutboxOptions(path: path))
        let entries = try await reopened.entries()
        #expect(entries.count == 1)
        #expect(entries.first?.changes.inserted == [band])
        #expect(entries.first?.changes.updated == [update])
        #expect(entries.first?.attempts == 1 && entries.first?.state == .pending)
        #expect(entries.first?.lastError?.contains("connection refused") == true)
        #expect(try await reopened.integrityCheck() == "ok")
        #expect(reopened.pendingCount == 1)
        #expect(backend.applied == 0)
    }

    /// An app (or `storechain outbox`) finds the outbox by what it does, scoped or not, and
    /// settles a refused save through it without knowing its type.
    @Test func anOutboxIsFoundAsAHandlerHoldingSavesAndSettledThroughIt() async throws {
        backend.mode = .down
        let outbox = try OutboxHandler(model: model, options: OutboxOptions(path: path))
        let scoped = Chain(
            handlers: [outbox.when(kinds: [.save])], terminal: backend, clock: ManualClock(), tracing: nil)
        _ = try await scoped.send(.save(SaveChanges(inserted: [newBand("Grouper")])))
        // Refused when it is sent again: kept as failed for the app to settle.
        backend.mode = .refusing(["Band"])
        #expect(try await scoped.sync() == 0)
        let holders = scoped.handlers(of: (any SaveHolding).self)
        #expect(holders.count == 1)
        let held = try #require(holders.first)
        let failed = try await held.entries()
        #expect(failed.map(\.state) == [.failed], "\(failed)")
        let entry = try #require(failed.first)
        try await held.retry(entry.id)
        #expect(try await outbox.entries().map(\.state) == [.pending])
        try await held.discard(entry.id)
        #expect(try await held.entries().isEmpty)
        #expect(Chain(handlers: [], terminal: backend).handlers(of: (any SaveHolding).self).isEmpty)
    }

    @Test func pendingSavesReplayInOrderWithTheirTemporaryIDsRemapped() async throws {
        backend.mode = .down
        let outbox = try OutboxHandler(model: model, options: OutboxOptions(path: path))
        let chain = chain(outbox)
        let band = newBand("Grouper")
        let album = Node(
            id: .temporary(entity: "Album"), attributes: ["title": "Shade"], relationships: ["band": .toOne(band.id)])
        _ = try await chain.send(.save(SaveChanges(inserted: [band])))
        _ = try await chain.send(.save(SaveChanges(inserted: [album])))
        _ = try await chain.send(.save(SaveChanges(updated: [Node(id: id("Album", 10), attributes: ["year": 2011])])))
        #expect(outbox.pendingCount == 3)

        let events = chain.events.subscribe()
        backend.mode = .up
        #expect(try await chain.sync() == 0)
        #expect(try await outbox.entries().isEmpty)
        // Three saves; the album went after its band, with the band's new key (the update of
        // album 10 depends on neither, and may go beside them).
        let saves = backend.saves
        #expect(saves.count == 3)
        let bandID = try #require(backend.objects("Band", "name == 'Grouper'").first?.id)
        let inserts = saves.filter { !$0.inserted.isEmpty }
        #expect(inserts.map { $0.inserted.first?.id.entity } == ["Band", "Album"])
        #expect(inserts.last?.inserted.first?.relationships["band"] == RelationshipValue.toOne(bandID))
        let stored = try #require(backend.objects("Album", "title == 'Shade'").first)
        #expect(stored.relationships["band"] == RelationshipValue.toOne(bandID))
        #expect(backend.store.node(for: id("Album", 10))?[attribute: "year"] == 2011)
        // Each replay was announced with the permanent IDs and the objects now sent.
        var announced: [ChangeEvent] = []
        for await event in events {
            announced.append(event)
            if announced.count == 3 { break }
        }
        #expect(announced.allSatisfy { $0.source == "outbox" && $0.outbox.sent.count == 1 })
        let insertEvents = announced.filter { !$0.permanentIDs.isEmpty }
        #expect(insertEvents.map(\.permanentIDs) == [[band.id: bandID], [album.id: stored.id]])
        #expect(insertEvents.first?.outbox.sent == [bandID])
    }

    @Test func withParallelReplayOfOneEverySaveGoesInTheOrderMade() async throws {
        backend.mode = .down
        let outbox = try OutboxHandler(model: model, options: OutboxOptions(path: path, parallelReplay: 1))
        let chain = chain(outbox)
        let updates = [10, 11, 12, 10].enumerated().map { index, key in
            SaveChanges(updated: [Node(id: id("Album", key), attributes: ["year": .integer(2000 + index)])])
        }
        _ = try await chain.send(.save(SaveChanges(inserted: [newBand("Grouper")])))
        for changes in updates { _ = try await chain.send(.save(changes)) }
        backend.mode = .up
        #expect(try await chain.sync() == 0)
        let sent = backend.saves.map { $0.inserted.first?.id.entity ?? "\($0.updated[0].id)" }
        #expect(sent == ["Band", "Album/10", "Album/11", "Album/12", "Album/10"])
    }

    @Test func aNewSaveWaitsForTheSavesBeforeIt() async throws {
        backend.mode = .down
        let outbox = try OutboxHandler(model: model, options: OutboxOptions(path: path))
        let chain = chain(outbox)
        _ = try await chain.send(.save(SaveChanges(updated: [Node(id: id("Album", 10), attributes: ["year": 2011])])))
        backend.mode = .up
        let result = try await chain.send(
            .save(SaveChanges(updated: [Node(id: id("Album", 10), attributes: ["year": 2012])]))
        ).saveResult()
        #expect(!result.isPending)
        #expect(backend.saves.map { $0.updated.first?[attribute: "year"] } == [2011, 2012])
        #expect(backend.store.node(for: id("Album", 10))?[attribute: "year"] == 2012)
        #expect(try await outbox.entries().isEmpty)
    }

    @Test func aSaveWaitingBehindAnUnsentOneIsPendingToo() async throws {
        backend.mode = .down
        let outbox = try OutboxHandler(model: model, options: OutboxOptions(path: path))
        let chain = chain(outbox)
        _ = try await chain.send(.save(SaveChanges(inserted: [newBand("A")])))
        _ = try await chain.send(.save(SaveChanges(inserted: [newBand("B")])))
        // Both were recorded; the first was tried again before the second, which never went.
        #expect(backend.attempts == 2)
        #expect(try await outbox.entries().map(\.attempts) == [2, 0])
    }

    @Test func aSaveTheBackendRefusesFailsAsWithoutAnOutboxAndIsNotKept() async throws {
        backend.mode = .refusing(["Band"])
        let outbox = try OutboxHandler(model: model, options: OutboxOptions(path: path))
        await #expect(throws: StoreChainError.self) {
            try await chain(outbox).send(.save(SaveChanges(inserted: [newBand("Grouper")])))
        }
        #expect(try await outbox.entries().isEmpty)
    }

    @Test func aRepeatedSendIsSavedOnceThanksToItsIdempotencyKey() async throws {
        // The backend applies the save but the answer is lost: the outbox cannot tell, keeps it
        // pending, and sends it again with the same key.
        backend.mode = .losingAnswers
        let outbox = try OutboxHandler(model: model, options: OutboxOptions(path: path))
        let chain = chain(outbox)
        let result = try await chain.send(.save(SaveChanges(inserted: [newBand("Grouper")]))).saveResult()
        #expect(result.isPending)
        backend.mode = .up
        #expect(try await chain.sync() == 0)
        #expect(backend.saves.count == 2)
        #expect(backend.saves[0].idempotencyKey == backend.saves[1].idempotencyKey)
        #expect(backend.applied == 1)
        #expect(try backend.objects("Band", "name == 'Grouper'").count == 1)
    }

    @Test func aReplayTheBackendRefusesIsKeptFailedWithTheSavesThatDependOnIt() async throws {
        backend.mode = .down
        let outbox = try OutboxHandler(model: model, options: OutboxOptions(path: path))
        let chain = chain(outbox)
        let band = newBand("Grouper")
        let album = Node(
            id: .temporary(entity: "Album"), attributes: ["title": "Shade"], relationships: ["band": .toOne(band.id)])
        _ = try await chain.send(.save(SaveChanges(inserted: [band])))
        _ = try await chain.send(.save(SaveChanges(inserted: [album])))
        _ = try await chain.send(.save(SaveChanges(updated: [Node(id: id("Album", 10), attributes: ["year": 2011])])))
        let events = chain.events.subscribe()
        backend.mode = .refusing(["Band"])
        #expect(try await chain.sync() == 0)

        let entries = try await outbox.entries()
        #expect(entries.map(\.state) == [.failed, .failed])
        #expect(entries[0].lastError?.contains("refused") == true)
        #expect(entries[1].lastError?.contains("outbox entry \(entries[0].id)") == true)
        // The independent update went through.
        #expect(backend.store.node(for: id("Album", 10))?[attribute: "year"] == 2011)
        // (The update, independent of both, may be announced first.)
        let rejection = try #require(await events.first { !$0.outbox.rejected.isEmpty })
        #expect(rejection.outbox.rejected == [band.id] && rejection.outbox.rejection?.contains("422") == true)
        #expect(rejection.deleted == [band.id])

        // Failed entries wait for the app: retried, they go; discarded, they are gone.
        backend.mode = .up
        try await outbox.retry(entries[0].id)
        try await outbox.retry(entries[1].id)
        #expect(outbox.pendingCount == 2)
        #expect(try await chain.sync() == 0)
        #expect(try await outbox.entries().isEmpty)
        let stored = try #require(backend.objects("Album", "title == 'Shade'").first)
        #expect(stored.relationships["band"]?.objectIDs.first?.isTemporary == false)
    }

    @Test func discardingAnEntryForgetsIt() async throws {
        backend.mode = .down
        let outbox = try OutboxHandler(model: model, options: OutboxOptions(path: path))
        _ = try await chain(outbox).send(.save(SaveChanges(inserted: [newBand("Grouper")])))
        let entry = try #require(try await outbox.entries().first)
        try await outbox.discard(entry.id)
        #expect(try await outbox.entries().isEmpty)
        #expect(outbox.pendingCount == 0)
        await #expect(throws: StoreChainError.self) { try await outbox.retry(entry.id) }
    }

    @Test func pendingSavesGoOnTheRetryTimerWithABackoffThatDoubles() async throws {
        let clock = ManualClock()
        backend.mode = .down
        let outbox = try OutboxHandler(
            model: model, options: OutboxOptions(path: path, retryDelay: .seconds(2), maxRetryDelay: .seconds(60)))
        let chain = chain(outbox, clock: clock)
        _ = try await chain.send(.save(SaveChanges(inserted: [newBand("Grouper")])))
        // First retry after 2 s: still down, so the next waits 4 s.
        try await clock.waitForSleepers(1)
        await clock.advance(by: .seconds(2))
        try await backend.waitForAttempts(2)
        try await clock.waitForSleepers(1)
        await clock.advance(by: .seconds(3))
        #expect(backend.attempts == 2)
        let events = chain.events.subscribe()
        backend.mode = .up
        await clock.advance(by: .seconds(1))
        var iterator = events.makeAsyncIterator()
        let sent = try #require(await iterator.next())
        #expect(sent.outbox.sent.count == 1 && sent.source == "outbox")
        #expect(try await outbox.entries().isEmpty)
        await chain.shutdown(cancelling: true)
    }

    @Test func pendingSavesGoAsSoonAsAnotherRequestSucceeds() async throws {
        backend.mode = .down
        let outbox = try OutboxHandler(model: model, options: OutboxOptions(path: path, retryDelay: .seconds(3600)))
        let chain = chain(outbox)
        _ = try await chain.send(.save(SaveChanges(inserted: [newBand("Grouper")])))
        let events = chain.events.subscribe()
        backend.mode = .up
        _ = try await chain.send(.objectFault(id("Band", 1)))
        var iterator = events.makeAsyncIterator()
        let sent = try #require(await iterator.next())
        #expect(sent.inserted.count == 1 && sent.outbox.sent == sent.inserted)
        #expect(try await outbox.entries().isEmpty)
        await chain.shutdown(cancelling: true)
    }

    @Test func aBackendThatAnswersReadsButRefusesSavesWithA503IsLeftToTheRetryTimer() async throws {
        let clock = ManualClock()
        backend.mode = .readOnly
        let outbox = try OutboxHandler(model: model, options: OutboxOptions(path: path, retryDelay: .seconds(10)))
        let chain = chain(outbox, clock: clock)
        _ = try await chain.send(.save(SaveChanges(inserted: [newBand("Grouper")])))
        #expect(backend.attempts == 1)
        // Reads succeed, but a 503 to saves is the backend's own answer: no save per read.
        for _ in 0..<5 { _ = try await chain.send(.objectFault(id("Band", 1))) }
        // A send started in the background would have run once the background work is done.
        try await chain.background.waitForIdle()
        #expect(backend.attempts == 1)
        let events = chain.events.subscribe()
        backend.mode = .up
        try await clock.waitForSleepers(1)
        await clock.advance(by: .seconds(10))
        var iterator = events.makeAsyncIterator()
        #expect(try #require(await iterator.next()).outbox.sent.count == 1)
        #expect(outbox.pendingCount == 0 && backend.attempts == 2)
        await chain.shutdown(cancelling: true)
    }

    @Test func aSecondOutboxFileOfAnotherSchemaIsAClearError() throws {
        let path = outboxPath()
        _ = try OutboxHandler(model: model, options: OutboxOptions(path: path))
        let other = path + ".store"
        _ = try SQLiteStore(path: other, model: model)
        #expect {
            _ = try OutboxHandler(model: model, options: OutboxOptions(path: other))
        } throws: { error in
            let error = error as? StoreChainError
            return error?.code == .storeFile && error?.location?.file == other
        }
    }
}

extension OutboxHandlerTests {
    @Test func aSaveWhoseCallerIsCancelledIsKeptAndSentOnce() async throws {
        backend.mode = .hanging
        let outbox = try OutboxHandler(model: model, options: OutboxOptions(path: path, retryDelay: .seconds(3600)))
        let chain = chain(outbox)
        let saving = Task { try await chain.send(.save(SaveChanges(inserted: [newBand("Grouper")]))) }
        try await backend.waitForAttempts(1)
        saving.cancel()
        // The caller hears that the save is pending: it is recorded, and goes later.
        #expect(try await saving.value.saveResult().isPending)
        #expect(try await outbox.entries().count == 1)
        backend.mode = .up
        #expect(try await chain.sync() == 0)
        #expect(try backend.objects("Band", "name == 'Grouper'").count == 1)
        await chain.shutdown(cancelling: true)
    }

    @Test func shutdownDoesNotWaitForTheRetryTimerAndANewProcessSendsWhatWaits() async throws {
        let clock = ManualClock()
        backend.mode = .down
        do {
            let outbox = try OutboxHandler(model: model, options: OutboxOptions(path: path, retryDelay: .seconds(60)))
            let chain = chain(outbox, clock: clock)
            _ = try await chain.send(.save(SaveChanges(inserted: [newBand("Grouper")])))
            try await clock.waitForSleepers(1)
            // Returns with the timer still waiting (the manual clock never moves here).
            await chain.shutdown()
            #expect(backend.attempts == 1)
        }
        backend.mode = .up
        let reopened = try OutboxHandler(model: model, options: OutboxOptions(path: path))
        #expect(try await chain(reopened).sync() == 0)
        #expect(try backend.objects("Band", "name == 'Grouper'").count == 1 && backend.applied == 1)
    }
}
