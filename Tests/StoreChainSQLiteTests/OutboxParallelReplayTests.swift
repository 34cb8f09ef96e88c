import Foundation
import StoreChain
import StoreChainTesting
import Testing

@testable import StoreChainSQLite

/// Replay in lanes: saves that depend on each other go in the order made, one after another;
/// independent ones go side by side, up to `parallel-replay` at once.
@Suite struct OutboxParallelReplayTests {
    let model: ObjectModel
    let backend: ScriptedBackend
    let path = outboxPath()

    init() throws {
        model = try MusicFixture.model()
        backend = try ScriptedBackend()
    }

    func update(_ id: ObjectID, _ attributes: AttributeValues = ["name": "x"]) -> SaveChanges {
        SaveChanges(updated: [Node(id: id, attributes: attributes)])
    }

    /// Saves recorded while the backend was down, then the outbox opened again (as after a
    /// restart: no failure seen yet, so every lane may start at once).
    func reopened(after saves: [SaveChanges], parallelReplay: Int = 4, clock: ManualClock = ManualClock())
        async throws -> (OutboxHandler, Chain)
    {
        backend.mode = .down
        let options = OutboxOptions(path: path, retryDelay: .seconds(2), parallelReplay: parallelReplay)
        do {
            let outbox = try OutboxHandler(model: model, options: options)
            let chain = Chain(handlers: [outbox], terminal: backend, clock: ManualClock(), tracing: nil)
            for changes in saves { #expect(try await chain.send(.save(changes)).saveResult().isPending) }
            await chain.shutdown(cancelling: true)
        }
        let outbox = try OutboxHandler(model: model, options: options)
        return (outbox, Chain(handlers: [outbox], terminal: backend, clock: clock, tracing: nil))
    }

    /// Lets every held save go on, so that no test leaves a save waiting when it fails early.
    func releaseAll() {
        backend.mode = .up
        backend.release()
    }

    // MARK: Lanes

    @Test func savesThatShareAnObjectShareALaneAndTheRestHaveTheirOwn() {
        let band = newBand("Grouper")
        let saves: [SaveChanges] = [
            SaveChanges(inserted: [band]),
            SaveChanges(inserted: [
                Node(
                    id: .temporary(entity: "Album"), attributes: ["title": "Shade"],
                    relationships: ["band": .toOne(band.id)])
            ]),
            update(id("Album", 10), ["year": 2011]),
            update(id("Band", 1)),
            update(id("Album", 10), ["year": 2012]),
            // Points album 11 at band 1: it depends on the update of band 1 before it.
            SaveChanges(updated: [Node(id: id("Album", 11), relationships: ["band": .toOne(id("Band", 1))])]),
            update(id("Band", 2)),
        ]
        let entries = saves.enumerated().map { (id: Int64($0.offset + 1), changes: $0.element) }
        #expect(OutboxLanes(entries, model: model, separate: true).lanes == [[1, 2], [3, 5], [4, 6], [7]])
        #expect(OutboxLanes(entries, model: model, separate: false).lanes == [[1, 2, 3, 4, 5, 6, 7]])

        // A delete of a track may cascade into albums (related to tracks): every save touching
        // an album or a track joins its lane, and with them the saves they share objects with.
        let withDelete = entries + [(id: 8, changes: SaveChanges(deleted: [id("Track", 300)]))]
        #expect(OutboxLanes(withDelete, model: model, separate: true).lanes == [[1, 2, 3, 4, 5, 6, 8], [7]])
    }

    // MARK: Replay

    @Test func independentSavesGoSideBySideUpToTheLimitAndDependentOnesWait() async throws {
        let band = newBand("Grouper")
        let album = Node(
            id: .temporary(entity: "Album"), attributes: ["title": "Shade"], relationships: ["band": .toOne(band.id)])
        let saves =
            [SaveChanges(inserted: [band]), SaveChanges(inserted: [album])]
            + (1...4).map { SaveChanges(inserted: [newBand("Band \($0)")]) }
        let (outbox, chain) = try await reopened(after: saves, parallelReplay: 3)
        backend.mode = .holding
        defer { releaseAll() }
        let replay = Task { try await chain.sync() }
        // Three lanes at once: the band with its album, and two of the four other bands.
        try await backend.waitForHeld(3)
        for _ in 0..<300 { await Task.yield() }
        #expect(backend.held == 3)
        // The album waits for its band, whose permanent ID it needs.
        #expect(!backend.saves.contains { $0.inserted.contains { $0.id.entity == "Album" } })
        releaseAll()
        #expect(try await replay.value == 0)
        #expect(backend.mostHeld == 3)
        #expect(try backend.objects("Band", "name BEGINSWITH 'Band '").count == 4)
        let stored = try #require(backend.objects("Album", "title == 'Shade'").first)
        let bandID = try #require(backend.objects("Band", "name == 'Grouper'").first?.id)
        #expect(stored.relationships["band"] == RelationshipValue.toOne(bandID))
        #expect(try await outbox.entries().isEmpty)
        #expect(backend.applied == 6 && backend.attempts == 6 + 6)
    }

    @Test func afterAFailureOneRequestGoesAloneBeforeTheOthers() async throws {
        let (_, chain) = try await reopened(after: (1...4).map { SaveChanges(inserted: [newBand("Band \($0)")]) })
        // A failed attempt: the backend was out of reach.
        #expect(try await chain.sync() == 4)
        backend.mode = .holding
        defer { releaseAll() }
        let replay = Task { try await chain.sync() }
        try await backend.waitForHeld(1)
        for _ in 0..<300 { await Task.yield() }
        #expect(backend.held == 1)
        backend.mode = .up
        backend.release()
        #expect(try await replay.value == 0)
        #expect(try backend.objects("Band", "name BEGINSWITH 'Band '").count == 4)
    }

    @Test func aLaneTheBackendCannotTakeStopsTheOthersAndTheRetryWaitsOnce() async throws {
        let clock = ManualClock()
        let (outbox, chain) = try await reopened(
            after: (1...6).map { SaveChanges(inserted: [newBand("Band \($0)")]) }, parallelReplay: 3, clock: clock)
        backend.mode = .holding
        defer { releaseAll() }
        let replay = Task { try await chain.sync() }
        try await backend.waitForHeld(3)
        // The backend goes away: the three sent fail, and no lane starts another save.
        backend.mode = .down
        backend.release()
        #expect(try await replay.value == 6)
        #expect(backend.attempts == 6 + 3)
        // (While the backend was down, each save tried the oldest again: entry 1 has 6 attempts.)
        #expect(try await outbox.entries().map(\.attempts) == [7, 1, 1, 0, 0, 0])
        // Three lanes met one outage: the retry waits the first delay (2 s), and one more
        // failure doubles it (4 s), as for a single lane.
        let events = chain.events.subscribe()
        for delay in [2, 4] {
            try await clock.waitForSleepers(1)
            try #require(clock.nextDeadline == clock.now.addingTimeInterval(TimeInterval(delay)))
            if delay == 4 { backend.mode = .up }
            await clock.advance(by: .seconds(delay))
        }
        var sent = 0
        for await event in events where !event.outbox.sent.isEmpty {
            sent += 1
            if sent == 6 { break }
        }
        #expect(outbox.pendingCount == 0)
        #expect(try backend.objects("Band", "name BEGINSWITH 'Band '").count == 6)
        await chain.shutdown(cancelling: true)
    }
}
