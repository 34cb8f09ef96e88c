import Foundation
@_spi(Internals) import StoreChain

/// The rules a `CacheStorage` must keep for `CacheHandler` to answer right, as checks a
/// storage's own tests run. Each rule runs on a fresh storage from `make`, behind a
/// `CacheHandler` with a manual clock and a 60 s ttl, in front of the music fixture, whose
/// store is the oracle:
///
/// ```swift
/// @Test func myStorageKeepsTheCacheRules() async {
///     let failures = await CacheStorageConformance.check { MyStorage() }
///     #expect(failures.isEmpty, "\(failures)")
/// }
/// ```
///
/// StoreChain's memory, SQLite and PostgreSQL storages run through it in its own tests.
public enum CacheStorageConformance {
    /// A rule the storage broke, and how.
    public struct Failure: Error, Sendable, CustomStringConvertible {
        /// The rule's name (one of `rules`).
        public let rule: String
        /// What went wrong.
        public let problem: String

        public var description: String { "\(rule): \(problem)" }
    }

    /// The names of the rules, in the order they run.
    public static var rules: [String] { checks.map(\.name) }

    /// Runs every rule (or those named in `only`) on a fresh storage from `make` each, and
    /// returns the rules it broke; empty when it keeps them all. A rule whose storage throws
    /// fails with the error.
    public static func check<Storage: CacheStorage>(
        only: Set<String>? = nil, _ make: @Sendable () async throws -> Storage
    ) async -> [Failure] {
        var failures: [Failure] = []
        for check in checks where only?.contains(check.name) ?? true {
            do {
                let rig = try await Rig(storage: try await make())
                try await check.run(rig)
            } catch let problem as Problem {
                failures.append(Failure(rule: check.name, problem: problem.message))
            } catch {
                failures.append(Failure(rule: check.name, problem: "threw \(error)"))
            }
        }
        return failures
    }

    private struct Problem: Error {
        let message: String
    }

    private static func require(_ condition: Bool, _ message: @autoclosure () -> String) throws {
        if !condition { throw Problem(message: message()) }
    }

    /// A cache over the storage under test, in front of the fixture's backend.
    private struct Rig {
        let clock = ManualClock()
        let store: InMemoryStore
        let backend: RecordingResponder
        let chain: Chain
        let storage: any CacheStorage

        init<Storage: CacheStorage>(storage: Storage) async throws {
            let store = try MusicFixture.store()
            self.store = store
            backend = RecordingResponder(name: "backend") { request, context in
                try await store.respond(to: request, context: context)
            }
            let options = CacheOptions(expiry: CacheExpiry(defaultTTL: .seconds(60)))
            let handler = CacheHandler(name: "cache", model: store.model, storage: storage, options: options)
            chain = Chain(handlers: [handler], terminal: backend, clock: clock)
            self.storage = storage
        }

        func fetch(_ request: FetchRequest, policy: CachePolicy? = nil) async throws -> StoreResponse {
            try await chain.send(.fetch(request), context: chain.makeContext(cachePolicy: policy))
        }

        /// Fetches `request` and checks the answer against the oracle.
        @discardableResult
        func fetchChecked(_ request: FetchRequest, policy: CachePolicy? = nil, _ step: String) async throws
            -> StoreResponse
        {
            let response = try await fetch(request, policy: policy)
            let expected = try store.fetch(request)
            let answered = try response.fetchResult()
            try require(answered == expected, "\(step): \(request) answered \(answered), the backend holds \(expected)")
            return response
        }

        var backendFetches: Int { backend.count(.fetch) }
    }

    private struct Check: Sendable {
        let name: String
        let run: @Sendable (Rig) async throws -> Void
    }

    private static let albumsOfBand1 = FetchRequest(
        entity: "Album",
        predicate: .comparison(Comparison(.keyPath(["band", "id"]), .equal, .constant(.integer(1)))),
        sortDescriptors: [FetchSortDescriptor("title")])

    private static let checks: [Check] = [
        Check(name: "an answer is stored and answers again") { rig in
            try await rig.fetchChecked(albumsOfBand1, "first fetch")
            let again = try await rig.fetchChecked(albumsOfBand1, "second fetch")
            try require(
                again.info.cacheStatus == .hit, "the second fetch was \(String(describing: again.info.cacheStatus))")
            try require(rig.backendFetches == 1, "the backend was asked \(rig.backendFetches) times")
        },
        Check(name: "data is fresh until its expiry instant") { rig in
            try await rig.fetchChecked(albumsOfBand1, "first fetch")
            await rig.clock.advance(by: .milliseconds(59_999))
            let before = try await rig.fetchChecked(albumsOfBand1, "before expiry")
            try require(
                before.info.cacheStatus == .hit, "1 ms before expiry: \(String(describing: before.info.cacheStatus))")
            await rig.clock.advance(by: .milliseconds(1))
            try await rig.fetchChecked(albumsOfBand1, "at expiry")
            try require(rig.backendFetches == 2, "at the expiry instant the backend was not asked again")
        },
        Check(name: "every result form comes from one stored query") { rig in
            try await rig.fetchChecked(albumsOfBand1, "objects")
            for form in [FetchRequest.ResultType.objectIDs, .count, .dictionaries(["title", "year"])] {
                var request = albumsOfBand1
                request.resultType = form
                try await rig.fetchChecked(request, "as \(form)")
            }
            try require(rig.backendFetches == 1, "the backend was asked \(rig.backendFetches) times")
        },
        Check(name: "a complete collection answers other queries of its entity") { rig in
            try await rig.fetchChecked(FetchRequest(entity: "Album"), "every album")
            let recent = FetchRequest(
                entity: "Album",
                predicate: .comparison(Comparison(.keyPath(["year"]), .greater, .constant(.integer(2000)))),
                sortDescriptors: [FetchSortDescriptor("year", ascending: false)], fetchLimit: 2)
            let answer = try await rig.fetchChecked(recent, "a window of it")
            try require(
                answer.info.cacheStatus == .hit, "the window was \(String(describing: answer.info.cacheStatus))")
            try require(rig.backendFetches == 1, "the backend was asked \(rig.backendFetches) times")
        },
        Check(name: "a fetched object answers its fault") { rig in
            try await rig.fetchChecked(FetchRequest(entity: "Album"), "every album")
            let id = ObjectID(entity: "Album", key: .integer(10))
            let fault = try await rig.chain.send(.objectFault(id))
            let expected = try await rig.store.respond(to: .objectFault(id), context: rig.chain.makeContext())
            try require(fault.result == expected.result, "the fault answered \(fault.result), not \(expected.result)")
            try require(rig.backend.count(.objectFault) == 0, "the fault went to the backend")
        },
        Check(name: "a saved change is seen by the next fetch") { rig in
            try await rig.fetchChecked(albumsOfBand1, "before the save")
            let renamed = Node(
                id: ObjectID(entity: "Album", key: .integer(10)), attributes: ["title": .string("Renamed")])
            _ = try await rig.chain.send(.save(SaveChanges(updated: [renamed])))
            try await rig.fetchChecked(albumsOfBand1, "after the save")
        },
        Check(name: "a deleted object leaves every stored answer") { rig in
            try await rig.fetchChecked(FetchRequest(entity: "Album"), "before the delete")
            try await rig.fetchChecked(albumsOfBand1, "before the delete")
            _ = try await rig.chain.send(.save(SaveChanges(deleted: [ObjectID(entity: "Album", key: .integer(11))])))
            try await rig.fetchChecked(FetchRequest(entity: "Album"), "the collection after the delete")
            try await rig.fetchChecked(albumsOfBand1, "the query after the delete")
        },
        Check(name: "a write whose condition fails writes nothing") { rig in
            // The handler's check that no save overtook an answer, made where the storage writes.
            try await rig.fetchChecked(albumsOfBand1, "first fetch")
            var write = CacheWrite()
            write.removed = [ObjectID(entity: "Album", key: .integer(10))]
            write.invalidated = ["Album"]
            write.incomplete = ["Album"]
            write.condition = { false }
            let removed = try await rig.storage.write(write)
            try require(removed.isEmpty, "a write whose condition failed removed \(removed)")
            let again = try await rig.fetchChecked(albumsOfBand1, "after the write")
            try require(
                again.info.cacheStatus == .hit,
                "a write whose condition failed was applied: the next fetch was "
                    + String(describing: again.info.cacheStatus))
        },
        Check(name: "nothing is answered fresh after expire") { rig in
            // A storage may keep what it holds (served stale where allowed) or forget it; the
            // default `expire(at:)` forgets.
            try await rig.fetchChecked(albumsOfBand1, "first fetch")
            try await rig.storage.expire(at: rig.clock.now)
            let cached = try await rig.fetchChecked(albumsOfBand1, policy: .cacheOnly, "cache-only after expire")
            try require(
                rig.backendFetches > 1 || cached.info.isStale, "data made stale by expire(at:) was answered as fresh")
            let before = rig.backendFetches
            try await rig.fetchChecked(albumsOfBand1, "after expire")
            try require(rig.backendFetches > before || before > 1, "data made stale was not revalidated")
        },
        Check(name: "clear forgets everything") { rig in
            try await rig.fetchChecked(albumsOfBand1, "first fetch")
            try await rig.storage.clear()
            let after = try await rig.fetchChecked(albumsOfBand1, "after clear")
            try require(after.info.cacheStatus == .miss, "after clear: \(String(describing: after.info.cacheStatus))")
            try require(rig.backendFetches == 2, "the backend was asked \(rig.backendFetches) times")
        },
    ]
}
