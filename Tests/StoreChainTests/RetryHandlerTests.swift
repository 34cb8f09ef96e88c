import Foundation
import StoreChainTesting
import Testing

@testable import StoreChain

@Suite struct RetryHandlerTests {
    let request = StoreRequest.objectFault(ObjectID(entity: "Band", key: 1))

    /// The error the HTTP module makes of a status (`RemoteError.code(for:)`).
    static func status(_ code: Int, retryAfter: Duration? = nil) -> StoreChainError {
        let meaning: StoreChainError.Code =
            switch code {
            case 429: .rateLimited
            case 408, 500..<600: .backendUnavailable
            default: .httpStatus
            }
        var error = StoreChainError(meaning, "GET /bands/1 answered \(code)")
        error.status = code
        error.retryAfter = retryAfter
        return error
    }

    /// A terminal that throws the given errors in turn, then answers.
    static func failing(_ errors: [any Error]) -> RecordingResponder {
        let remaining = Locked(errors)
        return RecordingResponder { request, _ in
            if let error = remaining.withLock({ $0.isEmpty ? nil : $0.removeFirst() }) { throw error }
            return StoreResponse(.object(nil), info: ResponseInfo(answeredBy: "terminal", origin: .remote))
        }
    }

    func chain(_ terminal: RecordingResponder, _ options: RetryOptions = RetryOptions(), clock: ManualClock) -> Chain {
        Chain(handlers: [RetryHandler(options: options, jitter: { $0 })], terminal: terminal, clock: clock)
    }

    @Test func retriesTransientErrorsWithExponentialBackoff() async throws {
        let clock = ManualClock()
        let terminal = Self.failing([Self.status(503), StoreChainError(.transport, "connection reset")])
        let chain = chain(terminal, clock: clock)
        async let response = chain.send(request)
        try await clock.waitForSleepers(1)
        await clock.advance(by: .milliseconds(199))
        #expect(terminal.count() == 1, "the first retry waits the base delay")
        await clock.advance(by: .milliseconds(1))
        try await clock.waitForSleepers(1)
        await clock.advance(by: .milliseconds(399))
        #expect(terminal.count() == 2, "the second waits twice as long")
        await clock.advance(by: .milliseconds(1))
        _ = try await response
        #expect(terminal.count() == 3)
    }

    @Test func givesUpAtMaxAttemptsWithTheLastError() async throws {
        let clock = ManualClock()
        let terminal = Self.failing(Array(repeating: Self.status(500), count: 10))
        let chain = chain(terminal, RetryOptions(maxAttempts: 3, baseDelay: .seconds(1)), clock: clock)
        let task = Task { try await chain.send(request) }
        for _ in 0..<2 {
            try await clock.waitForSleepers(1)
            await clock.advance(by: .seconds(10))
        }
        await #expect(throws: StoreChainError.self) { try await task.value }
        #expect(terminal.count() == 3)
    }

    @Test func honoursRetryAfter() async throws {
        let clock = ManualClock()
        let terminal = Self.failing([Self.status(429, retryAfter: .seconds(5))])
        let chain = chain(terminal, clock: clock)
        async let response = chain.send(request)
        try await clock.waitForSleepers(1)
        await clock.advance(by: .milliseconds(4_999))
        #expect(terminal.count() == 1)
        await clock.advance(by: .milliseconds(1))
        _ = try await response
        #expect(terminal.count() == 2)
    }

    @Test func neverRetriesWhatIsNotSafeOrNotTransient() async throws {
        let clock = ManualClock()
        let insert = StoreRequest.save(SaveChanges(inserted: [TestData.node("Band", 9)]))
        let update = StoreRequest.save(SaveChanges(updated: [TestData.node("Band", 1)]))
        for (request, error, options) in [
            (insert, Self.status(503), RetryOptions(retriesSaves: true)),
            (update, Self.status(503), RetryOptions()),
            (self.request, Self.status(404), RetryOptions()),
            (self.request, Self.status(400), RetryOptions()),
        ] {
            let terminal = Self.failing([error])
            await #expect(throws: StoreChainError.self) {
                try await chain(terminal, options, clock: clock).send(request)
            }
            #expect(terminal.count() == 1, "\(request) after \(error.message)")
        }
        let terminal = Self.failing([Self.status(503)])
        let retried = chain(terminal, RetryOptions(retriesSaves: true), clock: clock)
        async let saved = retried.send(update)
        try await clock.waitForSleepers(1)
        await clock.advance(by: .seconds(1))
        _ = try await saved
        #expect(terminal.count() == 2, "declared idempotent, an update is retried")
    }

    @Test func cancellationIsNeverRetried() async throws {
        let clock = ManualClock()
        let terminal = Self.failing([Self.status(503)])
        let chain = chain(terminal, clock: clock)
        let task = Task { try await chain.send(request) }
        try await clock.waitForSleepers(1)
        task.cancel()
        await #expect(throws: CancellationError.self) { try await task.value }
        #expect(terminal.count() == 1)
    }

    @Test func doesNotRetryPastTheDeadline() async throws {
        let clock = ManualClock()
        let terminal = Self.failing([Self.status(503, retryAfter: .seconds(30))])
        let chain = chain(terminal, clock: clock)
        let error = await #expect(throws: StoreChainError.self) {
            try await chain.send(request, context: chain.makeContext(deadline: clock.now.addingTimeInterval(10)))
        }
        #expect(error?.status == 503)
        #expect(terminal.count() == 1)
    }

    @Test func fullJitterStaysBelowTheCeiling() {
        let handler = RetryHandler(options: RetryOptions(baseDelay: .milliseconds(100), maxDelay: .seconds(1)))
        #expect(handler.ceiling(after: 1) == .milliseconds(100))
        #expect(handler.ceiling(after: 4) == .milliseconds(800))
        #expect(handler.ceiling(after: 40) == .seconds(1))
        let delays = (0..<1_000).map { _ in RetryPolicy.fullJitter(.seconds(1)) }
        #expect(delays.allSatisfy { $0 >= .zero && $0 <= .seconds(1) })
        #expect(Set(delays).count > 900, "spread, not constant")
    }
}
