import Foundation
import StoreChainTesting
import Testing

@testable import StoreChain

/// The claim rules of a cache whose storage several processes share (`CacheStorage.claimWait`),
/// without a database: two chains over one storage are two processes, and the storage's claims
/// are a table both see. The PostgreSQL tests run the same rules against a real server.
@Suite struct SharedCacheClaimTests {
    enum Backend: String, CaseIterable, CustomTestStringConvertible {
        /// Answers every request in full.
        case fullAnswers
        /// Answers with an etag, and a revalidation with "not modified".
        case notModified

        var testDescription: String { rawValue }
    }

    private let albums = FetchRequest(entity: "Album", sortDescriptors: [FetchSortDescriptor("title")])

    /// A stale entry is refreshed once for both processes, even when the waiting one looks again
    /// while the refreshing one is still storing what came back: the claim lasts until the answer
    /// is stored (it once ended when the answer arrived, so a process that looked in between found
    /// the entry still stale and asked upstream too).
    @Test(arguments: Backend.allCases)
    func aStaleEntryIsRefreshedOnceWhileTheOtherProcessWaits(_ kind: Backend) async throws {
        let clock = ManualClock()
        let store = try MusicFixture.store()
        let backend = RecordingResponder(name: "backend") { request, context in
            guard kind == .notModified else { return try await store.respond(to: request, context: context) }
            if case .revalidation = request {
                return StoreResponse(
                    .fetched(.objects([])),
                    info: ResponseInfo(answeredBy: "backend", origin: .remote, notModified: true))
            }
            var response = try await store.respond(to: request, context: context)
            response.info.freshness = ResponseFreshness(validators: Validators(etag: "\"v1\""))
            return response
        }
        let storage = ClaimingMemoryStorage()
        func process() -> Chain {
            Chain(
                handlers: [CacheHandler(name: "shared-cache", model: store.model, storage: storage)],
                terminal: backend, clock: clock)
        }
        let (first, second) = (process(), process())
        #expect(try await first.send(.fetch(albums)).info.cacheStatus == .miss)
        #expect(try await second.send(.fetch(albums)).info.cacheStatus == .hit, "both processes share it")
        await clock.advance(by: .seconds(301))

        storage.holdWrites()
        let refreshing = Task { try await first.send(.fetch(albums)) }
        try await storage.untilAWriteIsHeld()
        // The first process has its answer and is storing it; the second finds the entry stale.
        let poll = CacheHandler<ClaimingMemoryStorage>.claimPollInterval
        let waiting = Finishing { try await second.send(.fetch(albums)) }
        try await firstOf({ try await clock.waitForSleepers(1) }, { try await backend.waitForRequests(3) })
        #expect(backend.requests.count == 2, "the second process waits for the first: \(backend.requests)")
        await clock.advance(by: poll)
        await clock.advance(by: poll)
        storage.releaseWrites()

        let refreshed = try await refreshing.value
        #expect(refreshed.info.cacheStatus == (kind == .notModified ? .revalidated : .refreshed))
        let shared = try await waiting.value(advancing: clock, within: poll)
        #expect(try shared.fetchResult() == store.fetch(albums))
        #expect(shared.info.cacheStatus == .refreshed, "answered from what the first process stored")
        #expect(backend.requests.count == 2, "one fetch and one refresh between both: \(backend.requests)")
        #expect(try await second.send(.fetch(albums)).info.cacheStatus == .hit)
    }
}

/// A memory storage that chains share as processes share a PostgreSQL cache: a claim is held in
/// a table all of them see, and writes can be held back to catch a process mid-store.
final class ClaimingMemoryStorage: ForwardingCacheStorage {
    private struct State {
        var claimed: Set<String> = []
        var holdsWrites = false
        var heldWrites: [CheckedContinuation<Void, Never>] = []
    }

    let inner = MemoryCacheStorage()
    private let state = Watched(State())

    /// Writes from now on wait until `releaseWrites()`.
    func holdWrites() {
        state.withLock { $0.holdsWrites = true }
    }

    /// Lets held writes and later ones through.
    func releaseWrites() {
        let held = state.withLock { state in
            state.holdsWrites = false
            defer { state.heldWrites = [] }
            return state.heldWrites
        }
        for write in held { write.resume() }
    }

    /// Returns once a write waits to be let through.
    func untilAWriteIsHeld() async throws {
        try await state.wait(for: "a write held by the shared storage") { !$0.heldWrites.isEmpty }
    }

    /// Whether no process holds a claim.
    var claimsAreFree: Bool {
        state.withLock { $0.claimed.isEmpty }
    }

    private func passHold() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let held = state.withLock { state in
                if state.holdsWrites { state.heldWrites.append(continuation) }
                return state.holdsWrites
            }
            if !held { continuation.resume() }
        }
    }

    var claimWait: Duration? { .seconds(5) }

    func claim(_ key: String) async -> CacheClaim? {
        guard state.withLock({ $0.claimed.insert(key).inserted }) else { return nil }
        return CacheClaim { self.state.withLock { _ = $0.claimed.remove(key) } }
    }

    func write(_ write: CacheWrite) async throws -> Set<ObjectID> {
        await passHold()
        return await inner.write(write)
    }
    func refresh(_ target: CacheTarget, freshness: Freshness) async throws {
        await passHold()
        await inner.refresh(target, freshness: freshness)
    }
}
