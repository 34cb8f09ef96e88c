// The shared cache's tests: built with the Postgres trait (`.ci/run` enables every trait).
#if Postgres
    import Foundation
    import Logging
    import PostgresNIO
    import StoreChain
    import StoreChainPostgres
    import StoreChainTestSupport
    import StoreChainTesting
    import Testing

    /// What the PostgreSQL storage adds to the cache rules (which `CacheRulesTests` checks over it
    /// like over memory and SQLite): sharing between processes, namespaces, damaged rows, a server
    /// that goes away, and where its work runs.
    @Suite struct PostgresCacheTests {
        let albums = FetchRequest(
            entity: "Album", predicate: try! FetchPredicate(format: "year > 1970"),
            sortDescriptors: [FetchSortDescriptor("title")])

        @Test func whatOneProcessFetchedTheOthersRead() async throws {
            let schema = TestPostgres.freshSchema()
            let (first, firstBackend) = try Self.chain(schema: schema)
            let (second, secondBackend) = try Self.chain(schema: schema)
            let fetched = try await first.send(.fetch(albums))
            #expect(fetched.info.cacheStatus == .miss)
            let shared = try await second.send(.fetch(albums))
            #expect(shared.info.cacheStatus == .hit && shared.info.origin == .disk, "\(shared.info)")
            #expect(try shared.fetchResult() == MusicFixture.store().fetch(albums))
            let fault = try await second.send(.objectFault(ObjectID(entity: "Album", key: 10)))
            #expect(fault.info.cacheStatus == .hit)
            #expect(firstBackend.count() == 1 && secondBackend.count() == 0, "one upstream request between both")
        }

        @Test func namespacesInOneSchemaDoNotSeeEachOther() async throws {
            let schema = TestPostgres.freshSchema()
            let (music, _) = try Self.chain(schema: schema, namespace: "music")
            let (other, otherBackend) = try Self.chain(schema: schema, namespace: "other")
            _ = try await music.send(.fetch(albums))
            let answer = try await other.send(.fetch(albums))
            #expect(answer.info.cacheStatus == .miss)
            #expect(otherBackend.count() == 1)
            // Clearing one namespace leaves the other's entries.
            try await PostgresCacheStorage(
                address: try PostgresAddress(url: TestPostgres.url()), schema: schema, namespace: "other"
            )
            .clear()
            #expect(try await music.send(.fetch(albums)).info.cacheStatus == .hit)
            #expect(try await other.send(.fetch(albums)).info.cacheStatus == .miss)
        }

        @Test func aDamagedRowIsDroppedAndFetchedAgain() async throws {
            let schema = TestPostgres.freshSchema()
            let log = CapturedLog()
            let (chain, backend) = try Self.chain(schema: schema, logger: log.logger())
            _ = try await chain.send(.fetch(albums))
            try await Self.execute("UPDATE \(schema).nodes SET payload = '\\x0102'::bytea WHERE id LIKE 'Album/%'")
            let fault = try await chain.send(.objectFault(ObjectID(entity: "Album", key: 10)))
            #expect(fault.info.cacheStatus == .miss, "the damaged row is not an answer")
            #expect(try fault.objectNode()?.attributes["title"] == .string("Guide to an Escape"))
            #expect(backend.count(.objectFault) == 1)
            #expect(log.text.contains("damaged entry"), "\(log.text)")
            let again = try await chain.send(.objectFault(ObjectID(entity: "Album", key: 10)))
            #expect(again.info.cacheStatus == .hit, "stored again after the fetch")
        }

        @Test func aServerThatGoesAwayIsNotAnErrorAndIsUsedAgainWhenItIsBack() async throws {
            let cluster = try TestPostgresCluster.start()
            defer { try? cluster.remove() }
            let clock = ManualClock()
            let log = CapturedLog()
            let store = try MusicFixture.store()
            let backend = RecordingResponder(forwardingTo: store)
            let storage = try PostgresCacheStorage(
                address: try PostgresAddress(url: cluster.url), schema: "music", user: "postgres-cache at test.yml:3",
                clock: clock, logger: log.logger())
            let chain = Chain(
                handlers: [CacheHandler(name: "postgres-cache", model: store.model, storage: storage)],
                terminal: backend,
                clock: clock, logger: log.logger())
            _ = try await chain.send(.fetch(albums))

            try cluster.stopServer()
            let bands = FetchRequest(entity: "Band", sortDescriptors: [FetchSortDescriptor("name")])
            let whileDown = try await chain.send(.fetch(bands))
            #expect(try whileDown.fetchResult() == store.fetch(bands), "answered from upstream")
            let cached = try await chain.send(.fetch(albums))
            #expect(cached.info.cacheStatus == .miss && backend.count() == 3, "nothing cached is reachable")
            let outage = log.entries.filter {
                $0.level == .warning && $0.message.hasPrefix("postgres-cache at test.yml:3: cannot use PostgreSQL")
            }
            #expect(outage.count == 1, "the storage warns once per outage, naming itself: \(log.text)")
            #expect(log.text.contains("is out of reach"), "later uses fail at once, without a connection attempt")

            try cluster.startServer()
            await clock.advance(by: .seconds(1))
            let back = try await chain.send(.fetch(albums))
            #expect(back.info.cacheStatus == .hit, "the data outlived the restart: \(log.text)")
            #expect(log.text.contains("reachable again"))
        }

        @MainActor @Test func itsWorkRunsOffTheMainActor() async throws {
            MainQueueProbe.mark()
            let store = try MusicFixture.store()
            let storage = try PostgresCacheStorage(
                address: try PostgresAddress(url: TestPostgres.url()), schema: TestPostgres.freshSchema())
            let places = Locked<[Bool]>([])
            storage.setAccessProbe { places.withLock { $0.append(MainQueueProbe.isCurrent) } }
            let chain = Chain(terminal: store) {
                CacheHandler(name: "postgres-cache", model: store.model, storage: storage)
            }
            _ = try await chain.send(.fetch(albums))
            let hit = try await chain.send(.fetch(albums))
            #expect(hit.info.origin == .disk)
            #expect(MainQueueProbe.isCurrent)
            let probed = places.withLock { $0 }
            #expect(probed.count >= 3 && !probed.contains(true), "no PostgreSQL work on the main queue: \(probed)")
        }

        @Test func identicalMissesInTwoProcessesMakeOneUpstreamRequest() async throws {
            let schema = TestPostgres.freshSchema()
            let clock = ManualClock()
            let (first, backend) = try Self.chain(schema: schema, clock: clock, firstAnswerAfter: .seconds(1))
            let (second, _) = try Self.chain(schema: schema, clock: clock, backend: backend)
            let fetching = Task { try await first.send(.fetch(albums)) }
            try await backend.waitForRequests(1)
            let waiting = Finishing { try await second.send(.fetch(albums)) }
            try await waiting.sleepsOrEnds(on: clock, sleepers: 2)
            #expect(backend.count() == 1, "the second process waits for the first one's claim")
            await clock.advance(by: .seconds(1))
            #expect(try await fetching.value.info.cacheStatus == .miss)
            let shared = try await waiting.value(advancing: clock)
            #expect(shared.info.cacheStatus == .hit && shared.info.origin == .disk, "\(shared.info)")
            #expect(try shared.fetchResult() == MusicFixture.store().fetch(albums))
            #expect(backend.count() == 1, "one upstream request between both")
        }

        @Test func aClaimHeldPastTheWaitDoesNotHoldTheOthersBack() async throws {
            let schema = TestPostgres.freshSchema()
            let clock = ManualClock()
            let log = CapturedLog()
            let (first, backend) = try Self.chain(schema: schema, clock: clock, firstAnswerAfter: .seconds(30))
            let (second, _) = try Self.chain(schema: schema, clock: clock, backend: backend, logger: log.logger())
            let stuck = Task { try await first.send(.fetch(albums)) }
            try await backend.waitForRequests(1)
            let waiting = Finishing { try await second.send(.fetch(albums)) }
            try await waiting.sleepsOrEnds(on: clock, sleepers: 2)
            await clock.advance(by: .seconds(5))
            let answer = try await waiting.value(advancing: clock)
            #expect(answer.info.cacheStatus == .miss, "after the wait it asks upstream itself")
            #expect(backend.count() == 2)
            #expect(log.text.contains("another process has been fetching"), "\(log.text)")
            await clock.advance(by: .seconds(30))
            _ = try await stuck.value
        }

        @Test func aWaitForAnotherProcessEndsAtTheRequestsDeadline() async throws {
            let schema = TestPostgres.freshSchema()
            let clock = ManualClock()
            let (first, backend) = try Self.chain(schema: schema, clock: clock, firstAnswerAfter: .seconds(30))
            let (second, _) = try Self.chain(schema: schema, clock: clock, backend: backend)
            let stuck = Task { try await first.send(.fetch(albums)) }
            try await backend.waitForRequests(1)
            let context = second.makeContext(deadline: clock.now.addingTimeInterval(1))
            let waiting = Finishing { try await second.send(.fetch(albums), context: context) }
            try await waiting.sleepsOrEnds(on: clock, sleepers: 2)
            await clock.advance(by: .seconds(1))
            let error = await #expect(throws: StoreChainError.self, "a 1 s deadline ends a wait of up to 5 s") {
                try await waiting.value(advancing: clock)
            }
            #expect(error?.code == .timedOut, "\(String(describing: error))")
            #expect(clock.now < Date(timeIntervalSince1970: 1_700_000_000 + 2), "it did not wait out claim-wait")
            #expect(backend.count() == 1, "nor asked upstream past its deadline")
            await clock.advance(by: .seconds(30))
            _ = try await stuck.value
        }

        @Test func faultsAreClaimedToo() async throws {
            let schema = TestPostgres.freshSchema()
            let clock = ManualClock()
            let (first, backend) = try Self.chain(schema: schema, clock: clock, firstAnswerAfter: .seconds(1))
            let (second, _) = try Self.chain(schema: schema, clock: clock, backend: backend)
            let album = ObjectID(entity: "Album", key: 10)
            let fetching = Task { try await first.send(.objectFault(album)) }
            try await backend.waitForRequests(1)
            let waiting = Finishing { try await second.send(.objectFault(album)) }
            try await waiting.sleepsOrEnds(on: clock, sleepers: 2)
            await clock.advance(by: .seconds(1))
            _ = try await fetching.value
            let shared = try await waiting.value(advancing: clock)
            #expect(shared.info.cacheStatus == .hit)
            #expect(try shared.objectNode()?.attributes["title"] == .string("Guide to an Escape"))
            #expect(backend.count() == 1)
        }

        /// A stale shared entry is refreshed once, not once per process: the refresh is claimed like
        /// a first fetch, and the process that waited reads what the other stored.
        @Test func aStaleSharedEntryIsRefreshedOnceAcrossProcesses() async throws {
            let schema = TestPostgres.freshSchema()
            let clock = ManualClock()
            let store = try MusicFixture.store()
            let answered = Locked(0)
            let backend = RecordingResponder(name: "backend") { request, context in
                // Only the refresh is held, so that a process asking again fails the count, not the run.
                let refresh = answered.withLock { count in
                    defer { count += 1 }
                    return count == 1
                }
                if refresh { try await clock.sleep(for: .seconds(1)) }
                return try await store.respond(to: request, context: context)
            }
            let (first, _) = try Self.chain(schema: schema, clock: clock, backend: backend)
            let (second, _) = try Self.chain(schema: schema, clock: clock, backend: backend)
            _ = try await first.send(.fetch(albums))
            #expect(try await second.send(.fetch(albums)).info.cacheStatus == .hit, "both processes hold it")
            await clock.advance(by: .seconds(301))

            let refreshing = Task { try await first.send(.fetch(albums)) }
            // The refresh has reached the backend (a listener waiting to reconnect would also count
            // as a sleeper, so the clock's sleepers do not say so).
            try await backend.waitForRequests(2)
            let waiting = Finishing { try await second.send(.fetch(albums)) }
            try await waiting.sleepsOrEnds(on: clock, sleepers: 2)
            await clock.advance(by: .seconds(1))
            #expect(try await refreshing.value.info.cacheStatus == .refreshed)
            let shared = try await waiting.value(advancing: clock)
            #expect(try shared.fetchResult() == store.fetch(albums))
            #expect(backend.requests.count == 2, "one fetch, one refresh between both processes: \(backend.requests)")
        }

        @Test func aSaveInOneProcessReachesTheOthersMemoryCachesAndObservers() async throws {
            let schema = TestPostgres.freshSchema()
            let backend = try MusicFixture.store()
            /// A process: a memory cache in front of the shared one, over the one backend.
            func process() throws -> (chain: Chain, storage: PostgresCacheStorage) {
                let shared = try PostgresCache(
                    model: backend.model, database: PostgresCacheDatabase(url: try TestPostgres.url(), schema: schema))
                let chain = Chain(handlers: [MemoryCache(model: backend.model), shared], terminal: backend)
                return (chain, shared.storage)
            }
            let (saver, _) = try process()
            let (reader, readerStorage) = try process()
            await readerStorage.untilListening()
            let bands = FetchRequest(entity: "Band", sortDescriptors: [FetchSortDescriptor("name")])
            let band = ObjectID(entity: "Band", key: 1)
            #expect(try await reader.send(.fetch(bands)).info.cacheStatus == .miss)
            #expect(try await reader.send(.fetch(bands)).info.origin == .memory, "the reader's memory cache has it")
            let heard = reader.events.subscribe()

            let renamed = Node(id: band, attributes: ["name": .string("Rue Royale (renamed)")])
            _ = try await saver.send(.save(SaveChanges(updated: [renamed])))

            let change = try #require(await Self.first(in: heard) { _ in true }, "the reader heard of no change")
            #expect(change.updated == [band] && change.invalidatedEntities.contains("Band"), "\(change)")
            #expect(change.source.contains("another process"))
            let after = try await reader.send(.fetch(bands))
            #expect(after.info.origin != .memory, "the memory cache forgot the stale answer")
            guard case .objects(let nodes) = try after.fetchResult() else { throw CancellationError() }
            #expect(nodes.contains { $0.attributes["name"] == .string("Rue Royale (renamed)") }, "\(nodes)")
        }

        /// PostgreSQL does not replay the notices a dropped `LISTEN` connection missed. A save made
        /// while the reader's listener was down must not leave its memory cache answering the old
        /// value until the ttl: listening again is a gap, which empties the caches above and makes
        /// observations refetch.
        @Test func noticesMissedWhileTheListenerWasDownAreAGapNotStaleData() async throws {
            let schema = TestPostgres.freshSchema()
            let backend = try MusicFixture.store()
            let clock = ManualClock()
            let saverCache = try PostgresCache(
                model: backend.model, database: PostgresCacheDatabase(url: try TestPostgres.url(), schema: schema))
            let saver = Chain(handlers: [MemoryCache(model: backend.model), saverCache], terminal: backend)
            let readerStorage = try PostgresCacheStorage(
                address: try PostgresAddress(url: try TestPostgres.url()), schema: schema, clock: clock)
            let reader = Chain(
                handlers: [
                    MemoryCache(model: backend.model),
                    PostgresCache(name: "postgres-cache", model: backend.model, storage: readerStorage),
                ], terminal: backend, clock: clock)
            let heard = reader.events.subscribe()
            await readerStorage.untilListening()
            let bands = FetchRequest(entity: "Band", sortDescriptors: [FetchSortDescriptor("name")])
            _ = try await reader.send(.fetch(bands))
            #expect(try await reader.send(.fetch(bands)).info.origin == .memory)
            let context = ObjectContext(chain: reader, model: backend.model)
            var results = context.observe(bands).timeout(.seconds(30), clock: SystemClock()).makeAsyncIterator()
            _ = try await results.next()

            // Every listener of this schema's channel (not of other tests') loses its connection;
            // the reader's waits on its clock before listening again, so the save below is sure to
            // fall in the gap.
            try await Self.execute(
                """
                SELECT pg_terminate_backend(pid) FROM pg_stat_activity
                WHERE query LIKE 'LISTEN%storechain_changes_\(schema)%' AND pid <> pg_backend_pid()
                """)
            try await clock.waitForSleepers(1)
            let band = ObjectID(entity: "Band", key: 1)
            let renamed = Node(id: band, attributes: ["name": .string("Rue Royale (renamed)")])
            _ = try await saver.send(.save(SaveChanges(updated: [renamed])))
            await clock.advance(by: .seconds(1))

            let gap = try #require(
                await Self.first(in: heard) { $0.isGap }, "listening again was not reported as a gap")
            #expect(gap.source.contains("another process"))
            // The memory cache may hold the answer again by now (the observation refetched), but
            // not the one from before the gap.
            let after = try await reader.send(.fetch(bands))
            guard case .objects(let nodes) = try after.fetchResult() else { throw CancellationError() }
            #expect(nodes.contains { $0.attributes["name"] == .string("Rue Royale (renamed)") }, "\(nodes)")
            let observed = try #require(try await results.next(), "the observation refetched after the gap")
            #expect(try await observed.asyncContains { try await $0.value("name") == .string("Rue Royale (renamed)") })
            await saver.shutdown()
            await reader.shutdown()
        }

        // MARK: Helpers

        /// The first event of `events` that passes `test`, or `nil` after 30 s. Not a timing check:
        /// a lost notice fails the test instead of hanging it.
        static func first(
            in events: AsyncStream<ChangeEvent>, where test: @escaping @Sendable (ChangeEvent) -> Bool
        ) async -> ChangeEvent? {
            await withTaskGroup(of: ChangeEvent?.self) { group in
                group.addTask { await events.first(where: test) }
                group.addTask {
                    try? await Task.sleep(for: .seconds(30))
                    return nil
                }
                defer { group.cancelAll() }
                return await group.next() ?? nil
            }
        }

        /// A chain whose cache shares `schema` (holding `namespace`), over `backend` (by default a
        /// new one over the music fixture that answers its first request after `firstAnswerAfter`
        /// on `clock`).
        static func chain(
            schema: String, namespace: String? = nil, clock: ManualClock? = nil,
            firstAnswerAfter delay: Duration = .zero, backend: RecordingResponder? = nil,
            logger: Logger = Logger(label: "storechain")
        ) throws -> (Chain, RecordingResponder) {
            let store = try MusicFixture.store()
            let answered = Locked(0)
            let backend =
                backend
                ?? RecordingResponder(name: "backend") { request, context in
                    let first = answered.withLock { count in
                        defer { count += 1 }
                        return count == 0
                    }
                    if first, let clock { try await clock.sleep(for: delay) }
                    return try await store.respond(to: request, context: context)
                }
            let cache = try PostgresCache(
                model: store.model,
                database: PostgresCacheDatabase(url: try TestPostgres.url(), schema: schema, namespace: namespace),
                logger: logger)
            let chain = Chain(handlers: [cache], terminal: backend, clock: clock ?? SystemClock(), logger: logger)
            return (chain, backend)
        }

        /// Runs a statement on a connection of its own, as another program would.
        static func execute(_ sql: String) async throws {
            let address = try PostgresAddress(url: try TestPostgres.url())
            let connection = try await PostgresConnection.connect(
                configuration: .init(
                    host: address.host, port: address.port, username: address.username, password: address.password,
                    database: address.database, tls: .disable), id: 1, logger: Logger(label: "test"))
            do {
                try await connection.query(PostgresQuery(unsafeSQL: sql), logger: Logger(label: "test"))
            } catch {
                try await connection.close()
                throw error
            }
            try await connection.close()
        }
    }

    extension Array {
        fileprivate func asyncContains(_ test: (Element) async throws -> Bool) async rethrows -> Bool {
            for element in self where try await test(element) { return true }
            return false
        }
    }
#endif
