import Foundation
import StoreChain
import Testing

@testable import StoreChainPipeline

/// A build without the `Postgres` trait still knows `postgres-cache` and a shared `rate-limit`:
/// a pipeline that names them fails at their line with how to turn the trait on. The registry
/// of such a build is made here in every build, so the test runs with the trait too.
@Suite struct PostgresTraitTests {
    private static var registryWithoutTrait: HandlerRegistry {
        var registry = HandlerRegistry.standard
        registry.registerPostgresTraitMissing()
        return registry
    }

    @Test func aPipelineNamingThePostgresCacheOrASharedLimitSaysHowToTurnTheTraitOn() throws {
        let text = """
            model: music.model.yml
            handlers:
              - memory-cache
              - postgres-cache:
                  url: postgres://app@db.internal/cache
                  ttl: 5m
              - rate-limit:
                  rate: 10/s
                  shared: { url: postgres://app@db.internal/cache }
            terminal:
              in-memory: { records: music.json }
            """
        let failure = try #require(throws: ValidationFailure.self) {
            try Pipeline.parse(
                text, source: "shared.yml", directory: PipelineFileTests.fixtures, registry: Self.registryWithoutTrait,
                validatesOnly: true)
        }
        let messages = failure.errors.map(\.description)
        #expect(failure.errors.count == 2, "one error each, no unknown options: \(messages)")
        #expect(
            messages.contains {
                $0.contains("shared.yml:4") && $0.contains("'postgres-cache' needs StoreChain's 'Postgres' trait")
            }, "\(messages)")
        #expect(
            messages.contains {
                $0.contains("shared.yml:9")
                    && $0.contains("rate-limit's 'shared' option needs StoreChain's 'Postgres' trait")
            }, "\(messages)")
        #expect(
            failure.errors.allSatisfy {
                $0.suggestion?.contains("traits: [\"Postgres\"]") == true
                    && $0.suggestion?.contains("swift build --traits Postgres") == true
            }, "\(messages)")
    }

    @Test func aRateLimitOfThisProcessAloneNeedsNoTrait() throws {
        let text = """
            model: music.model.yml
            handlers:
              - rate-limit: { rate: 10/s, burst: 5 }
            terminal:
              in-memory: { records: music.json }
            """
        let pipeline = try Pipeline.parse(
            text, source: "local.yml", directory: PipelineFileTests.fixtures, registry: Self.registryWithoutTrait)
        #expect(pipeline.handlers.first is RateLimitHandler)
    }
}
