import Foundation
import Logging
import StoreChain
import StoreChainTesting
import Synchronization
import Testing

@Suite struct LoggingHandlerTests {
    let clock = ManualClock()
    let log = CapturedLog()

    private func chain(_ terminal: any StoreResponder, secrets: Set<String> = []) -> Chain {
        Chain(
            handlers: [LoggingHandler(level: .info, secrets: secrets)], terminal: terminal, clock: clock,
            logger: log.logger())
    }

    @Test func oneLinePerRequestWithWhoAnsweredAndHowLong() async throws {
        let terminal = RecordingResponder { _, _ in
            await clock.advance(by: .milliseconds(12))
            var info = ResponseInfo(answeredBy: "remote", origin: .remote)
            info.pagesRead = 3
            info.exchanges = 3
            info.cacheStatus = .miss
            return StoreResponse(.fetched(.objects([])), info: info)
        }
        _ = try await chain(terminal).fetch(
            TestData.fetch(
                "Album", where: "year >= 2000", sort: [FetchSortDescriptor("year", ascending: false)], limit: 10))
        #expect(log.entries.map(\.level) == [.info])
        #expect(
            log.entries.first?.message
                == "fetch Album where year >= 2000 sort=-year limit=10 → remote cache=miss pages=3 exchanges=3 12.0ms"
        )
    }

    /// A fault a batching handler answered with others says how many shared its exchange.
    @Test func aBatchedFaultSaysHowManySharedItsExchange() async throws {
        let terminal = RecordingResponder { _, _ in
            var info = ResponseInfo(answeredBy: "remote", origin: .remote)
            info.exchanges = 1
            info.batchSize = 8
            return StoreResponse(.object(nil), info: info)
        }
        _ = try await chain(terminal).send(.objectFault(ObjectID(entity: "Track", key: 1)))
        #expect(log.entries.first?.message.contains("exchanges=1 batch=8 ") == true, "\(log.entries)")
    }

    @Test func aSubRequestSaysWhichRequestItServed() async throws {
        let terminal = RecordingResponder { request, context in
            if case .fetch = request {
                _ = try await context.subrequest(.objectFault(ObjectID(entity: "Band", key: 1)), serving: request)
            }
            return StoreResponse(.object(nil), info: ResponseInfo(answeredBy: "remote", origin: .remote))
        }
        _ = try await chain(terminal).send(.fetch(TestData.fetch("Album", where: "band.name == 'Low'")))
        #expect(
            log.entries.map(\.message) == [
                "object-fault Band/1 → remote cache=none 0.0ms for fetch Album where band.name == \"Low\"",
                "fetch Album where band.name == \"Low\" → remote cache=none 0.0ms",
            ])
    }

    @Test func failuresAreWarningsWithTheirDescription() async throws {
        let terminal = RecordingResponder { _, _ in
            throw StoreChainError(.backendUnavailable, "GET /bands/1 answered 503")
        }
        await #expect(throws: StoreChainError.self) {
            try await chain(terminal).send(.objectFault(ObjectID(entity: "Band", key: 1)))
        }
        #expect(log.entries.map(\.level) == [.warning])
        #expect(log.entries.first?.message.contains("object-fault Band/1 failed") == true)
        #expect(log.entries.first?.message.contains("answered 503") == true)
    }

    /// An app's cache-only request that the caches below cannot answer was logged as a failure
    /// at warning.
    @Test func aCacheOnlyRequestNothingCachedIsNotAFailure() async throws {
        let terminal = RecordingResponder { request, _ in
            throw StoreChainError(.notCached, "\(request) is not cached, and the cache-only policy forbids asking")
        }
        let model = try Fixtures.store().model
        let cached = Chain(
            handlers: [LoggingHandler(level: .info), MemoryCache(model: model)], terminal: terminal, clock: clock,
            logger: log.logger())
        var request = try TestData.fetch("Band", where: "country == 'UK'")
        request.cachePolicy = .cacheOnly
        await #expect(throws: StoreChainError.self) { try await cached.fetch(request) }
        #expect(terminal.requests.isEmpty, "refused below the cache, never sent to the terminal")
        #expect(log.entries.map(\.level) == [.info])
        #expect(log.entries.first?.message == "fetch Band where country == \"UK\" → not cached (cache-only) 0.0ms")

        request.cachePolicy = .useCache
        await #expect(throws: StoreChainError.self) { try await chain(terminal).fetch(request) }
        #expect(log.entries.map(\.level) == [.info, .warning], "without cache-only, not-cached is a failure")
    }

    @Test func secretsNeverReachTheLog() async throws {
        let terminal = RecordingResponder { _, _ in
            throw StoreChainError(
                .httpStatus, "GET https://api.example/v2/bands?api_key=s3cr3t&q=low answered 401",
                detail: "Authorization: Bearer abc.def-123 was refused; token=zzz9")
        }
        await #expect(throws: StoreChainError.self) {
            try await chain(terminal, secrets: ["api_key", "token"]).fetch(
                TestData.fetch("Band", where: "name == 'low'"))
        }
        let text = log.entries.map(\.message).joined(separator: "\n")
        for secret in ["s3cr3t", "abc.def-123", "zzz9"] { #expect(!text.contains(secret), "\(secret) in \(text)") }
        #expect(text.contains("api_key=REDACTED&q=low"))
        #expect(text.contains("Authorization: REDACTED"))
    }
}
