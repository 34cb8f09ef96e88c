// The shared cache's tests: built with the Postgres trait (`.ci/run` enables every trait).
#if Postgres
    import Foundation
    import StoreChain
    import StoreChainPipeline
    import StoreChainPostgres
    import StoreChainTestSupport
    import StoreChainTesting
    import Testing

    /// `postgres-cache` in a pipeline file: its options, and a bad URL or password reported with the
    /// pipeline's line.
    @Suite struct PostgresPipelineTests {
        static func pipeline(url: String, extra: String = "") -> String {
            """
            model: music.model.yml
            handlers:
              - memory-cache
              - postgres-cache:
                  url: "\(url)"
                  ttl: 5m\(extra)
            terminal:
              in-memory: { records: music.json }
            """
        }

        @Test func readsItsOptionsAndTakesThePasswordFromTheEnvironment() throws {
            let text = Self.pipeline(
                url: "postgres://app:${CACHE_PASSWORD}@db.internal:6543/cache",
                extra:
                    "\n      schema: music_cache\n      namespace: music-v2\n      max-size: 64MB\n      claim-wait: 2s"
            )
            let pipeline = try Pipeline.parse(
                text, source: "pg.yml", directory: PipelineFileTests.fixtures, environment: ["CACHE_PASSWORD": "s3cret"]
            )
            let cache = try #require(pipeline.handlers[1] as? PostgresCache)
            #expect(cache.storage.address.password == "s3cret")
            #expect(cache.storage.address.port == 6543)
            #expect(cache.storage.namespace == "music-v2")
            #expect(cache.storage.maxBytes == 64 << 20)
            #expect(cache.storage.claimWait == .seconds(2))
            #expect(cache.options.expiry.defaultTTL == .seconds(300))
        }

        @Test func claimWaitZeroSendsMissesUpstreamAtOnce() throws {
            let defaults = try Pipeline.parse(
                Self.pipeline(url: "postgres://app@db:5432/cache"), source: "pg.yml",
                directory: PipelineFileTests.fixtures)
            #expect((defaults.handlers[1] as? PostgresCache)?.storage.claimWait == .seconds(5))
            let off = try Pipeline.parse(
                Self.pipeline(url: "postgres://app@db:5432/cache", extra: "\n      claim-wait: 0s"), source: "pg.yml",
                directory: PipelineFileTests.fixtures)
            let cache = try #require(off.handlers[1] as? PostgresCache)
            #expect(cache.storage.claimWait == nil)
        }

        @Test func aSharedRateLimitReadsWhereItsStateIs() throws {
            let text = """
                model: music.model.yml
                handlers:
                  - rate-limit:
                      rate: 20/s
                      burst: 5
                      shared: { url: "postgres://app:${PGPASSWORD}@db.internal/app", key: music-api, schema: limits }
                terminal:
                  in-memory: { records: music.json }
                """
            let pipeline = try Pipeline.parse(
                text, source: "limit.yml", directory: PipelineFileTests.fixtures, environment: ["PGPASSWORD": "pw"])
            let limiter = try #require(pipeline.handlers.first as? RateLimitHandler).limiter
            #expect(limiter.options == RateLimitOptions(rate: 20, burst: 5))
            let shared = try #require(limiter.shared as? PostgresSharedRateLimit)
            #expect(
                shared.key == "music-api" && shared.address.password == "pw" && shared.address.host == "db.internal")

            let unnamed = text.replacingOccurrences(of: ", key: music-api", with: "")
            let failure = try #require(throws: ValidationFailure.self) {
                try Pipeline.parse(
                    unnamed, source: "limit.yml", directory: PipelineFileTests.fixtures, validatesOnly: true)
            }
            #expect(failure.errors.map(\.description).joined().contains("limit.yml:6"), "\(failure.errors)")
        }

        @Test func aBadURLIsAnErrorAtItsLine() throws {
            let failure = try #require(throws: ValidationFailure.self) {
                try Pipeline.parse(
                    Self.pipeline(url: "postgres://app:s3cret@/cache"), source: "pg.yml",
                    directory: PipelineFileTests.fixtures, validatesOnly: true)
            }
            let message = failure.errors.map(\.description).joined(separator: "\n")
            #expect(message.contains("pg.yml:5") && message.contains("names no host"), "\(message)")
            #expect(!message.contains("s3cret"), "the password is never shown: \(message)")
        }

        @Test func aWrongPasswordIsAWarningNamingThePipelineLineAndRequestsAreStillAnswered() async throws {
            let right = try PostgresAddress(url: TestPostgres.url())
            var wrong = right
            wrong.password = "not-the-password"
            let url =
                "postgres://\(wrong.username):\(wrong.password ?? "")@\(wrong.host):\(wrong.port)/\(wrong.database ?? "")"
            let pipeline = try Pipeline.parse(
                Self.pipeline(url: url), source: "pg.yml", directory: PipelineFileTests.fixtures)
            let log = CapturedLog()
            let chain = pipeline.makeChain(logger: log.logger())
            let bands = FetchRequest(entity: "Band", sortDescriptors: [FetchSortDescriptor("name")])
            let answer = try await chain.send(.fetch(bands))
            let expected = try await pipeline.terminal.respond(to: .fetch(bands), context: chain.makeContext())
            #expect(try answer.fetchResult() == expected.fetchResult(), "answered from upstream")
            let warning = log.entries.filter { $0.level == .warning }.map(\.message).joined(separator: "\n")
            #expect(warning.contains("postgres-cache at pg.yml:4"), "\(log.text)")
            #expect(warning.contains("password authentication failed"), "\(log.text)")
            #expect(!log.text.contains("not-the-password"), "the password is never logged")
        }
    }
#endif
