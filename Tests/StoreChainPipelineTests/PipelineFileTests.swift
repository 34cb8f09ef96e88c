import Foundation
import StoreChain
import StoreChainHTTP
import StoreChainPipeline
import StoreChainSQLite
import StoreChainTesting
import Testing

/// Pipeline files: every handler type from a fixture, and every kind of problem reported with
/// its line and key path.
@Suite struct PipelineFileTests {
    static let fixtures = URL(filePath: #filePath).deletingLastPathComponent().appending(path: "Fixtures")

    /// A copy of the fixtures in a fresh folder, so files the pipelines create land there.
    static func workingCopy() throws -> URL {
        let folder = TemporaryFolder.make("storechain-pipeline")
        try FileManager.default.copyItem(at: fixtures, to: folder)
        return folder
    }

    @Test func theOutboxLoadsWithItsOptionsAndOpensItsFileNextToThePipeline() async throws {
        let folder = try Self.workingCopy()
        let pipeline = try Pipeline.load(contentsOf: folder.appending(path: "outbox.pipeline.yml"))
        #expect(pipeline.stages.map(\.type) == ["memory-cache", "outbox", "retry"])
        let outbox = try #require(pipeline.handlers[1] as? OutboxHandler)
        #expect(outbox.options.retryDelay == .seconds(5) && outbox.options.maxRetryDelay == .seconds(60))
        #expect(!outbox.options.coalescesUpdates && outbox.options.parallelReplay == 2)
        #expect(outbox.options.acknowledgeAfter == .milliseconds(500))
        #expect(outbox.options.path == folder.appending(path: "data/outbox.sqlite").path)
        #expect(FileManager.default.fileExists(atPath: outbox.options.path))
        #expect(try await outbox.entries().isEmpty)
    }

    @Test func aPipelineWithAMistakeOpensNoFile() throws {
        let folder = try Self.workingCopy()
        #expect(throws: ValidationFailure.self) {
            try Pipeline.load(contentsOf: folder.appending(path: "errors/outbox-order.yml"))
        }
        #expect(!FileManager.default.fileExists(atPath: folder.appending(path: "errors/outbox.sqlite").path))
    }

    @Test func everyHandlerTypeLoadsWithItsOptions() async throws {
        let folder = try Self.workingCopy()
        let pipeline = try Pipeline.load(contentsOf: folder.appending(path: "every-handler.pipeline.yml"))
        #expect(
            pipeline.stages.map(\.type) == [
                "change-feed", "logging", "metrics", "memory-cache", "disk-cache", "pagination", "batching",
                "rate-limit", "retry",
            ])
        #expect(pipeline.stages.map(\.line) == [4, 5, 6, 7, 8, 15, 16, 18, 19])
        #expect(pipeline.terminalType == "json-file")
        let handlers = pipeline.handlers
        let logging = try #require(handlers[1] as? LoggingHandler)
        #expect(logging.level == .debug && logging.secrets.contains("api_key"))
        #expect((handlers[2] as? MetricsHandler)?.metrics.prefix == "music")
        let memory = try #require(handlers[3] as? MemoryCache)
        #expect(memory.storage.limits.maxObjects == 500 && memory.storage.limits.maxBytes == 2 << 20)
        #expect(memory.options.expiry.defaultTTL == .seconds(300))
        #expect(memory.options.expiry.entityTTL == ["Track": .seconds(3_600)])
        #expect(memory.options.staleIfError == .seconds(600))
        #expect(memory.options.expiry.heuristic)
        let disk = try #require(handlers[4] as? DiskCache)
        #expect(disk.options.staleWhileRevalidate == .seconds(86_400))
        #expect(disk.options.expiry.honoursResponseHeaders == false && !disk.options.expiry.heuristic)
        #expect(FileManager.default.fileExists(atPath: folder.appending(path: "cache/every.sqlite").path))
        let pagination = try #require(handlers[5] as? PaginationHandler)
        #expect(
            pagination.options
                == PaginationOptions(pageSize: 50, pageSizes: ["Track": 100], maxPages: 20, concurrency: 2))
        let rateLimit = try #require(handlers[7] as? RateLimitHandler)
        #expect(rateLimit.limiter.options == RateLimitOptions(rate: 10, burst: 20, maxInFlight: 4, mode: .failFast))
        let retry = try #require(handlers[8] as? RetryHandler)
        #expect(
            retry.options
                == RetryOptions(
                    maxAttempts: 4, baseDelay: .milliseconds(250), maxDelay: .seconds(5), retriesSaves: true))
        #expect(
            (handlers[0] as? ChangeFeedHandler)?.options
                == ChangeFeedOptions(
                    wait: .seconds(20), interval: .seconds(2), retryBaseDelay: .milliseconds(500),
                    retryMaxDelay: .seconds(60), cursorFile: folder.appending(path: "cache/every.cursor").path,
                    catchUpWait: .seconds(3)))
        let batching = try #require(handlers[6] as? ScopedHandler)
        #expect(batching.kinds == [.objectFault] && batching.entities == ["Track"])
        #expect(
            (batching.wrapped as? BatchingHandler)?.options
                == BatchingOptions(entities: ["Track"], window: .milliseconds(10), maxBatch: 50))

        let chain = pipeline.makeChain()
        let bands = try await chain.fetch(TestData.fetch("Band", where: "name BEGINSWITH 'R'"))
        let store = try JSONFileStore(contentsOf: folder.appending(path: "music.json"), model: pipeline.model)
        #expect(bands == (try store.fetch(TestData.fetch("Band", where: "name BEGINSWITH 'R'"))))
        await chain.shutdown()
    }

    /// A handler's options are read by the options type its Swift init takes: a bare name in a
    /// file gives exactly the Swift defaults, and a key of one cache is unknown to the other.
    @Test func optionsInFilesAreTheSwiftOptionsWithTheirDefaults() throws {
        let text = """
            model: music.model.yml
            handlers:
              - logging
              - memory-cache
              - pagination
              - batching: { entities: [Track] }
              - rate-limit: { rate: 5/s }
              - retry
            terminal:
              in-memory: {}
            """
        let pipeline = try Pipeline.parse(text, source: "defaults.yml", directory: Self.fixtures)
        let handlers = pipeline.handlers
        let logging = try #require(handlers[0] as? LoggingHandler)
        #expect(logging.level == LoggingHandler().level && logging.secrets == LoggingHandler().secrets)
        let memory = try #require(handlers[1] as? MemoryCache)
        #expect(memory.storage.limits == MemoryCacheStorage.Limits())
        #expect(memory.options == CacheOptions())
        #expect((handlers[2] as? PaginationHandler)?.options == PaginationOptions())
        #expect((handlers[3] as? BatchingHandler)?.options == BatchingOptions(entities: ["Track"]))
        #expect((handlers[4] as? RateLimitHandler)?.limiter.options == RateLimitOptions(rate: 5))
        #expect((handlers[5] as? RetryHandler)?.options == RetryOptions())

        let mixed = """
            model: music.model.yml
            handlers:
              - memory-cache: { compress: false }
              - disk-cache: { path: ./cache/mixed.sqlite, max-objects: 10 }
            terminal:
              in-memory: {}
            """
        let failure = try #require(throws: ValidationFailure.self) {
            try Pipeline.parse(mixed, source: "mixed.yml", directory: Self.fixtures, validatesOnly: true)
        }
        let messages = failure.errors.map(\.description)
        #expect(
            messages.contains { $0.contains("mixed.yml:3") && $0.contains("unknown option 'compress'") }, "\(messages)")
        #expect(
            messages.contains { $0.contains("mixed.yml:4") && $0.contains("unknown option 'max-objects'") },
            "\(messages)")
    }

    /// A bad value in a change feed's options or the remote's `changes` mapping is an error at
    /// its line, naming its key path.
    @Test func changeFeedOptionsAreCheckedWhereTheyAreWritten() throws {
        let text = """
            model: music.model.yml
            handlers:
              - change-feed: { wait: soon }
            terminal:
              remote:
                base-url: http://127.0.0.1:8080
                changes: { request: "FETCH /changes", entity-names: { record: Albun } }
                entities: { Band: {}, Album: {}, Track: {} }
            """
        let failure = try #require(throws: ValidationFailure.self) {
            try Pipeline.parse(text, source: "live.yml", directory: Self.fixtures, validatesOnly: true)
        }
        let messages = failure.errors.map(\.description)
        #expect(
            messages.contains { $0.contains("live.yml:3") && $0.contains("'soon' is not a duration") }, "\(messages)")
        #expect(
            messages.contains { $0.contains("live.yml:7") && $0.contains("changes.request") && $0.contains("method") },
            "\(messages)")
        #expect(
            messages.contains {
                $0.contains("live.yml:7") && $0.contains("changes.entity-names.record") && $0.contains("'Album'")
            }, "\(messages)")
    }

    /// An event-stream feed's options load from a file; a format it does not know, or a quiet
    /// time that is not a duration, is an error at its line.
    @Test func eventStreamFeedOptionsLoadAndBadValuesAreLocated() throws {
        func text(_ changes: String) -> String {
            """
            model: music.model.yml
            handlers:
              - change-feed: { wait: 25s, max-outage: 5m }
            terminal:
              remote:
                base-url: http://127.0.0.1:8080
                changes: \(changes)
                entities: { Band: {}, Album: {}, Track: {} }
            """
        }
        let good = try Pipeline.parse(
            text(
                "{ request: GET /events, format: event-stream, gap-events: [reset], ignored-events: [tick], quiet: 50ms }"
            ), source: "live.yml", directory: Self.fixtures)
        let options = try #require((good.terminal as? RemoteResponder)?.options.changes)
        #expect(options.format == .eventStream)
        #expect(options.gapEvents == ["reset"] && options.ignoredEvents == ["tick"])
        #expect(options.quiet == .milliseconds(50))
        #expect((good.handlers.first as? ChangeFeedHandler)?.options.maxOutage == .seconds(300))
        for (changes, problem) in [
            ("{ request: GET /events, format: sse }", "sse"), ("{ request: GET /events, quiet: later }", "later"),
        ] {
            let failure = try #require(throws: ValidationFailure.self) {
                try Pipeline.parse(text(changes), source: "live.yml", directory: Self.fixtures, validatesOnly: true)
            }
            let messages = failure.errors.map(\.description)
            #expect(messages.contains { $0.contains("live.yml:7") && $0.contains(problem) }, "\(messages)")
        }
    }

    @Test func jsonPipelineFilesWithBareHandlerNames() async throws {
        let pipeline = try Pipeline.load(contentsOf: Self.fixtures.appending(path: "minimal.pipeline.json"))
        #expect(pipeline.stages.map(\.type) == ["logging", "memory-cache"])
        #expect(pipeline.stages.map(\.line) == [3, 3], "JSON files get line numbers too")
        #expect((pipeline.handlers[1] as? MemoryCache)?.options.expiry.defaultTTL == .seconds(30))
        let tracks = FetchRequest(entity: "Track", resultType: .count)
        let store = try JSONFileStore(contentsOf: Self.fixtures.appending(path: "music.json"), model: pipeline.model)
        #expect(try await pipeline.makeChain().fetch(tracks) == (try store.fetch(tracks)))
    }

    /// (fixture, line, key path, what the message says) for each problem, in order.
    static let problemCases: [(String, [(Int, String, String)])] = [
        ("unknown-handler.yml", [(4, "handlers[1].memory-cach", "did you mean 'memory-cache'?")]),
        ("unknown-option.yml", [(5, "handlers[0].memory-cache.max-object", "did you mean 'max-objects'?")]),
        ("wrong-type.yml", [(4, "handlers[0].pagination.page-size", "expected a whole number, found 'fifty'")]),
        (
            "bad-literals.yml",
            [
                (3, "handlers[0].memory-cache.ttl", "'5 minutes' is not a duration"),
                (4, "handlers[1].disk-cache.max-size", "'200 parsecs' is not a size"),
                (5, "handlers[2].rate-limit.rate", "'10/fortnight' is not a rate"),
            ]
        ),
        (
            "missing-required.yml",
            [
                (6, "terminal.json-file", "the required option 'path' is missing"),
                (3, "handlers[0].rate-limit", "the required option 'rate' is missing"),
                (4, "handlers[1].batching", "the required option 'entities' is missing"),
            ]
        ),
        ("unset-env.yml", [(4, "terminal.remote.base-url", "STORECHAIN_TEST_UNSET_URL is not set")]),
        ("uncovered-entity.yml", [(5, "terminal.remote.entities", "cannot serve Album, Track")]),
        (
            "bad-order.yml",
            [
                (4, "handlers.memory-cache", "'memory-cache' is below 'pagination' (line 3)"),
                (
                    7, "handlers.batching",
                    "'batching' is below 'rate-limit' (line 6), where it cannot work: faults paced"
                ),
            ]
        ),
        (
            "outbox-order.yml",
            [
                (
                    4, "handlers.outbox",
                    "'outbox' is below 'pagination' (line 3), where it cannot work: the caches above it must hold"
                )
            ]
        ),
        (
            "feed-order.yml",
            [
                (
                    4, "handlers.change-feed",
                    "'change-feed' is below 'disk-cache' (line 3), where it cannot work: reads must wait for it"
                )
            ]
        ),
        (
            "bad-scope.yml",
            [
                (4, "handlers[0].when.kinds", "unknown request kind 'fetches' — did you mean 'fetch'?"),
                (6, "handlers[1].when.entities", "no entity 'Trak' — did you mean 'Track'?"),
            ]
        ),
        (
            "top-level.yml",
            [
                (2, "handler", "unknown key 'handler' — did you mean 'handlers'?"),
                (1, "model", "the model file 'missing.model.yml' does not exist"),
                (5, "terminal.remot", "unknown terminal type 'remot' — did you mean 'remote'?"),
            ]
        ),
        (
            "remote-mapping.yml",
            [
                (
                    9, "terminal.remote.entities.Band.fetch[0].paging",
                    "unknown paging style 'pagez' — did you mean 'pages'?"
                ),
                (11, "terminal.remote.entities.Album.relationships.band", "did you mean 'foreign-key'?"),
                (13, "terminal.remote.entities.Track.date-format", "'epoch' is not a date format"),
            ]
        ),
    ]

    /// Counts below one, and a remote mapping naming what the model lacks: every one reported
    /// at once, at its own line, by `validate` as by `load`.
    @Test func badCountsAndMappingNamesAreReportedAtTheirLines() throws {
        let url = Self.fixtures.appending(path: "errors/bad-counts.yml")
        let expected = [
            (17, "terminal.remote.entities.Album.relationships.bnd", "names relationship 'bnd'"),
            (13, "terminal.remote.entities.Band.attributes.nam", "names attribute 'nam'"),
            (3, "handlers[0].memory-cache.max-objects", "0 is not a count of one or more"),
            (4, "handlers[1].pagination.page-size", "-4 is not a count of one or more"),
            (5, "handlers[2].batching.max-batch", "0 is not a count"),
            (6, "handlers[3].rate-limit.burst", "-1 is not a count"),
            (7, "handlers[4].retry.attempts", "0 is not a count"),
        ]
        let loading = try #require(throws: ValidationFailure.self) {
            try Pipeline.load(contentsOf: url, environment: [:])
        }
        for errors in [loading.errors, Pipeline.validate(contentsOf: url, environment: [:])] {
            #expect(errors.count == expected.count, "\(errors)")
            for (error, (line, path, text)) in zip(errors, expected) {
                #expect(error.location?.line == line, "\(error)")
                #expect(error.location?.path == path, "\(error)")
                #expect(error.description.contains(text), "\(error)")
            }
        }
    }

    @Test(arguments: problemCases.map(\.0))
    func everyProblemIsReportedWithItsLineAndKeyPath(fixture: String) throws {
        let expected = try #require(Self.problemCases.first { $0.0 == fixture }?.1)
        let failure = try #require(throws: ValidationFailure.self) {
            try Pipeline.load(contentsOf: Self.fixtures.appending(path: "errors/\(fixture)"), environment: [:])
        }
        #expect(failure.errors.count == expected.count, "\(failure)")
        for (error, (line, path, text)) in zip(failure.errors, expected) {
            #expect(error.code == .invalidPipeline, "\(error)")
            #expect(error.location?.line == line, "\(error)")
            #expect(error.location?.path == path, "\(error)")
            #expect(error.description.contains(text), "\(error)")
            #expect(error.location?.file?.hasSuffix(fixture) == true, "\(error)")
        }
    }

    @Test func environmentValuesAndRelativePathsAreFilledIn() throws {
        let folder = try Self.workingCopy()
        let text = """
            model: music.model.yml
            handlers:
              - disk-cache: { path: "${CACHE_DIR}/music.sqlite" }
            terminal:
              in-memory: {}
            """
        let pipeline = try Pipeline.parse(
            text, source: "inline.yml", directory: folder, environment: ["CACHE_DIR": "./caches"])
        #expect(pipeline.stages.map(\.type) == ["disk-cache"])
        #expect(FileManager.default.fileExists(atPath: folder.appending(path: "caches/music.sqlite").path))
    }

    @Test func sqliteTerminalKeepsSavesAcrossChains() async throws {
        let folder = try Self.workingCopy()
        let text = """
            model: music.model.yml
            handlers:
              - memory-cache: {}
            terminal:
              sqlite: { path: data/music.sqlite, seed: music.json }
            """
        let first = try Pipeline.parse(text, source: "store.yml", directory: folder)
        #expect(first.terminalType == "sqlite")
        let chain = first.makeChain()
        let context = ObjectContext(chain: chain, model: first.model)
        let band = try context.insert("Band", values: ["name": "Saved Through SQLite", "country": "NZ"])
        try await context.save()
        #expect(band.objectID.key != nil)
        await chain.shutdown()
        #expect(FileManager.default.fileExists(atPath: folder.appending(path: "data/music.sqlite").path))

        // A second chain over the same file sees the save and the seed, and does not seed twice.
        func count(_ format: String?, in chain: Chain) async throws -> FetchResult {
            var request = try TestData.fetch("Band", where: format)
            request.resultType = .count
            return try await chain.fetch(request)
        }
        let second = try Pipeline.parse(text, source: "store.yml", directory: folder).makeChain()
        #expect(try await count("name == 'Saved Through SQLite'", in: second) == .count(1))
        let seed = try JSONFileStore(contentsOf: folder.appending(path: "music.json"), model: first.model)
        guard case .objects(let seededBands) = try seed.fetch(TestData.fetch("Band")) else {
            Issue.record("the seed store did not answer with objects")
            return
        }
        #expect(try await count(nil, in: second) == .count(seededBands.count + 1))
        await second.shutdown()
    }

    @Test func literalsPeopleExpect() {
        #expect(TimeSpan.parse("500ms") == .milliseconds(500))
        #expect(TimeSpan.parse("5m") == .seconds(300) && TimeSpan.parse("5min") == .seconds(300))
        #expect(TimeSpan.parse("1h") == .seconds(3_600) && TimeSpan.parse("1d") == .seconds(86_400))
        #expect(TimeSpan.parse("1.5s") == .milliseconds(1_500) && TimeSpan.parse("30") == .seconds(30))
        #expect(TimeSpan.parse("-1s") == nil && TimeSpan.parse("5 minutes") == nil && TimeSpan.parse("") == nil)
        #expect(ByteSize.parse("200MB") == 200 << 20 && ByteSize.parse("512KB") == 512 << 10)
        #expect(
            ByteSize.parse("1.5GB") == 3 << 29 && ByteSize.parse("100") == 100 && ByteSize.parse("2 MiB") == 2 << 20)
        #expect(ByteSize.parse("lots") == nil && ByteSize.parse("-1MB") == nil)
        #expect(Rate.parse("10/s") == 10 && Rate.parse("600/min") == 10 && Rate.parse("3600/h") == 1)
        #expect(Rate.parse("5") == 5 && Rate.parse("0/s") == nil && Rate.parse("10/fortnight") == nil)
    }

    @Test func customHandlerTypesAreRegisteredOnARegistryValue() async throws {
        struct TagOptions: Decodable {
            var tag: String
        }
        enum TagKey: ResponseFactKey { typealias Value = String }
        struct TagHandler: StoreHandler {
            let tag: String
            func handle(_ request: StoreRequest, context: RequestContext, next: NextResponder) async throws
                -> StoreResponse
            {
                var response = try await next(request, context)
                response.info.facts[TagKey.self] = tag
                return response
            }
        }
        var registry = HandlerRegistry.standard
        registry.register("tag", options: TagOptions.self) { options, _ in TagHandler(tag: options.tag) }
        let text = """
            model: music.model.yml
            handlers:
              - tag: { tag: hello }
            terminal:
              in-memory: { records: music.json }
            """
        let pipeline = try Pipeline.parse(text, source: "tag.yml", directory: Self.fixtures, registry: registry)
        let response = try await pipeline.makeChain().send(.fetch(FetchRequest(entity: "Band")))
        #expect(response.info.facts[TagKey.self] == "hello")
        let failure = try #require(throws: ValidationFailure.self) {
            try Pipeline.parse(text, source: "tag.yml", directory: Self.fixtures)
        }
        #expect(failure.errors.first?.description.contains("unknown handler type 'tag'") == true, "no global registry")
    }
}
