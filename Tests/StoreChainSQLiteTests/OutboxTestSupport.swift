import Foundation
import StoreChain
import StoreChainSQLite
import StoreChainTesting

/// A backend for outbox tests over the music fixture: up, down (a transport error), refusing
/// saves of some entities (422), or applying a save and then losing its answer. Like a backend
/// that honours `Idempotency-Key`, it answers a save whose key it has seen with its first
/// answer and applies nothing.
final class ScriptedBackend: StoreResponder {
    enum Mode: Sendable {
        case up
        case down
        /// Saves touching these entities are refused with 422; everything else works.
        case refusing(Set<String>)
        /// Saves are applied, but the answer never arrives (a transport error).
        case losingAnswers
        /// Reads are answered; saves fail with 503, as from a backend in maintenance.
        case readOnly
        /// Saves never get an answer: they wait until their task is cancelled.
        case hanging
        /// Saves wait until the test releases them (`release`), then go on in the mode of then.
        case holding
    }

    let name = "scripted-backend"
    let store: InMemoryStore
    private let state = Watched(State())

    private struct State {
        var mode = Mode.up
        var answers: [String: SaveResult] = [:]
        /// Every save that reached the backend, repeats included, in order.
        var saves: [SaveChanges] = []
        /// Saves applied (repeats with a known key are not).
        var applied = 0
        /// Saves sent to the backend, answered or not.
        var attempts = 0
        /// Every other request that reached the backend, in order.
        var reads: [StoreRequest] = []
        /// Reads refused while down.
        var refusedReads = 0
        /// Saves waiting for the test to release them, and the most that ever waited at once.
        var held: [CheckedContinuation<Void, Never>] = []
        var mostHeld = 0
    }

    init() throws {
        store = try MusicFixture.store()
    }

    var mode: Mode {
        get { state.withLock { $0.mode } }
        set { state.withLock { $0.mode = newValue } }
    }

    var saves: [SaveChanges] { state.withLock { $0.saves } }
    /// How many reads it refused while down.
    var refusedReads: Int { state.withLock { $0.refusedReads } }

    /// The stored objects of `entity` matching `predicate`.
    func objects(_ entity: String, _ predicate: String) throws -> [Node] {
        guard
            case .objects(let nodes) = try store.fetch(
                FetchRequest(entity: entity, predicate: FetchPredicate(predicate)))
        else { return [] }
        return nodes
    }
    var applied: Int { state.withLock { $0.applied } }
    var reads: [StoreRequest] { state.withLock { $0.reads } }
    var attempts: Int { state.withLock { $0.attempts } }
    /// How many saves wait for `release` now, and the most that waited at once.
    var held: Int { state.withLock { $0.held.count } }
    var mostHeld: Int { state.withLock { $0.mostHeld } }

    /// Waits until at least `count` saves have been sent to the backend (answered or not).
    func waitForAttempts(_ count: Int) async throws {
        try await state.wait(for: "\(count) saves sent to the backend") { $0.attempts >= count }
    }

    /// Waits until exactly `count` saves wait for `release`.
    func waitForHeld(_ count: Int) async throws {
        try await state.wait(for: "\(count) saves held by the backend") { $0.held.count == count }
    }

    /// Waits until the backend has refused at least `count` reads while down.
    func waitForRefusedReads(_ count: Int) async throws {
        try await state.wait(for: "\(count) reads refused by the backend") { $0.refusedReads >= count }
    }

    /// Lets the `count` saves that have waited longest go on (all when `nil`).
    func release(_ count: Int? = nil) {
        let released = state.withLock { state in
            let released = state.held.prefix(count ?? state.held.count)
            state.held.removeFirst(released.count)
            return released
        }
        for save in released { save.resume() }
    }

    func respond(to request: StoreRequest, context: RequestContext) async throws -> StoreResponse {
        var mode = self.mode
        if case .save = request, case .holding = mode {
            await withCheckedContinuation { save in
                state.withLock { state in
                    state.held.append(save)
                    state.mostHeld = max(state.mostHeld, state.held.count)
                }
            }
            mode = self.mode
        }
        if case .save = request { state.withLock { $0.attempts += 1 } }
        if case .down = mode {
            if case .save = request {} else { state.withLock { $0.refusedReads += 1 } }
            throw StoreChainError(.transport, "connection refused (the test backend is down)")
        }
        guard case .save(let changes) = request else {
            state.withLock { $0.reads.append(request) }
            return try await store.respond(to: request, context: context)
        }
        if case .hanging = mode {
            try await Task.sleep(for: .seconds(3_600))
        }
        if case .readOnly = mode {
            throw StoreChainError(.backendUnavailable, "the test backend takes no saves now (503)")
        }
        let result = try state.withLock { state throws -> SaveResult in
            state.saves.append(changes)
            if let key = changes.idempotencyKey, let first = state.answers[key] { return first }
            if case .refusing(let entities) = mode, !changes.entities.isDisjoint(with: entities) {
                throw StoreChainError(.saveFailed, "saving \(changes): the backend refused it (422)")
            }
            let result = try store.save(changes)
            state.applied += 1
            if let key = changes.idempotencyKey { state.answers[key] = result }
            return result
        }
        if case .losingAnswers = mode {
            throw StoreChainError(.transport, "the connection was reset before the answer arrived")
        }
        return StoreResponse(.saved(result), info: ResponseInfo(answeredBy: name, origin: .remote))
    }
}

/// The object of `entity` with the integer key `key`.
func id(_ entity: String, _ key: Int) -> ObjectID { ObjectID(entity: entity, key: .integer(key)) }

/// A band to insert, with a temporary ID.
func newBand(_ name: String) -> Node {
    Node(id: .temporary(entity: "Band"), attributes: ["name": .string(name)])
}

/// A fresh outbox file path in its own directory.
func outboxPath() -> String {
    TemporaryFolder.make("storechain-outbox").appending(path: "outbox.sqlite").path
}
