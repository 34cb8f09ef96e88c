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
    }

    let name = "scripted-backend"
    let store: InMemoryStore
    private let state = Locked(State())

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
    }

    init() throws {
        store = try MusicFixture.store()
    }

    var mode: Mode {
        get { state.withLock { $0.mode } }
        set { state.withLock { $0.mode = newValue } }
    }

    var saves: [SaveChanges] { state.withLock { $0.saves } }

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

    func respond(to request: StoreRequest, context: RequestContext) async throws -> StoreResponse {
        let mode = self.mode
        if case .save = request { state.withLock { $0.attempts += 1 } }
        if case .down = mode {
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
            var error = StoreChainError(.saveFailed, "the test backend takes no saves now (503)")
            error.status = 503
            throw error
        }
        let result = try state.withLock { state throws -> SaveResult in
            state.saves.append(changes)
            if let key = changes.idempotencyKey, let first = state.answers[key] { return first }
            if case .refusing(let entities) = mode, !changes.entities.isDisjoint(with: entities) {
                var error = StoreChainError(.saveFailed, "saving \(changes): the backend refused it (422)")
                error.status = 422
                throw error
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

/// A fresh outbox file path in its own directory.
func outboxPath() -> String {
    FileManager.default.temporaryDirectory.appending(path: "storechain-outbox-\(UUID())/outbox.sqlite").path
}

/// Waits (by yielding) until `condition` holds, for work a handler started in the background.
func eventually(_ condition: () async throws -> Bool) async rethrows -> Bool {
    for _ in 0..<2_000 {
        if try await condition() { return true }
        await Task.yield()
    }
    return try await condition()
}
