import Foundation

/// Retries idempotent requests that fail with a transient error, with exponential backoff and
/// full jitter, honouring `Retry-After` and the request's deadline.
///
/// Retried: fetches and faults; saves only when `RetryOptions.retriesSaves` declares the backend's
/// updates and deletes idempotent, and never a save that inserts (a POST may have happened).
/// Never retried: errors that are not transient (a 4xx other than 408 and 429, a bad request),
/// and cancellation.
///
/// ```swift
/// Chain(terminal: remote) { RetryHandler(options: .init(maxAttempts: 4)) }
/// ```
public struct RetryHandler: StoreHandler {
    public let name = "retry"
    /// How many attempts, and how long between them.
    public let options: RetryOptions
    package let policy: RetryPolicy

    /// A handler retrying with `options`.
    public init(options: RetryOptions = RetryOptions()) {
        self.init(options: options, jitter: RetryPolicy.fullJitter)
    }

    /// A retry handler with its own jitter (tests pass `{ $0 }` to wait the full ceiling).
    package init(options: RetryOptions, jitter: @escaping @Sendable (Duration) -> Duration) {
        self.options = options
        self.policy = RetryPolicy(options: options, jitter: jitter)
    }

    public func handle(_ request: StoreRequest, context: RequestContext, next: NextResponder) async throws
        -> StoreResponse
    {
        guard isIdempotent(request) else { return try await next(request, context) }
        // Pages and sub-requests pass here on their own, so each is retried alone; an error a
        // retry handler further down already retried is not retried again.
        return try await policy.run(request.kind.rawValue, context: context, retryingRetried: false) {
            try await next(request, context)
        }
    }

    /// The backoff ceiling before retry number `attempt`: base × 2^(attempt-1), at most maxDelay.
    func ceiling(after attempt: Int) -> Duration {
        policy.ceiling(after: attempt)
    }

    private func isIdempotent(_ request: StoreRequest) -> Bool {
        guard case .save(let changes) = request else { return true }
        return options.retriesSaves && changes.inserted.isEmpty
    }
}

/// How `RetryHandler` retries.
public struct RetryOptions: Sendable, Hashable {
    /// Attempts in all, the first included.
    public var maxAttempts: Int
    /// The backoff ceiling before the first retry; it doubles for each further one.
    public var baseDelay: Duration
    /// The longest wait between two attempts.
    public var maxDelay: Duration
    /// Whether saves that only update and delete may be retried as a whole (the backend's
    /// updates and deletes are idempotent). Saves that insert are never retried.
    public var retriesSaves: Bool

    /// Options with the given attempts and delays, each with the default the pipeline reference
    /// names.
    public init(
        maxAttempts: Int = 4, baseDelay: Duration = .milliseconds(200), maxDelay: Duration = .seconds(30),
        retriesSaves: Bool = false
    ) {
        self.maxAttempts = max(1, maxAttempts)
        self.baseDelay = baseDelay
        self.maxDelay = maxDelay
        self.retriesSaves = retriesSaves
    }
}

/// When and how long to wait between attempts, for `RetryHandler`.
package struct RetryPolicy: Sendable {
    package let options: RetryOptions
    /// Picks the delay before a retry from the backoff ceiling (full jitter by default).
    private let jitter: @Sendable (Duration) -> Duration

    package init(options: RetryOptions, jitter: @escaping @Sendable (Duration) -> Duration = RetryPolicy.fullJitter) {
        self.options = options
        self.jitter = jitter
    }

    /// Runs `operation`, retrying transient failures with backoff, `Retry-After` and the
    /// context's deadline; the error that ends it says how many attempts were made. An error
    /// that was already retried below is not retried again unless `retryingRetried`.
    package func run<T>(
        _ what: String, context: RequestContext, retryingRetried: Bool, _ operation: () async throws -> T
    ) async throws -> T {
        var attempt = 1
        while true {
            do {
                let number = attempt
                return try await context.withSpan("storechain.retry.attempt") { span in
                    span?.attributes["storechain.attempt"] = number
                    return try await operation()
                }
            } catch var error as StoreChainError where error.isTransient {
                guard attempt < options.maxAttempts, retryingRetried || error.attempts == nil else {
                    error.attempts = error.attempts ?? attempt
                    throw error
                }
                let delay = error.retryAfter ?? jitter(ceiling(after: attempt))
                let wake = context.clock.now.addingTimeInterval(delay.timeInterval)
                if let deadline = context.deadline, wake >= deadline {
                    error.attempts = attempt
                    throw error
                }
                context.logger.debug(
                    "retry: \(what) attempt \(attempt) failed (\(error.message)); retrying in \(delay)")
                context[StoreMetricsKey.self]?.count("retries_total", ["kind": what])
                try await context.clock.sleep(until: wake)
                attempt += 1
            }
        }
    }

    /// The backoff ceiling before retry number `attempt`: base × 2^(attempt-1), at most maxDelay.
    func ceiling(after attempt: Int) -> Duration {
        let factor = 1 << min(attempt - 1, 30)
        return min(options.maxDelay, options.baseDelay * factor)
    }

    /// A uniformly random delay between zero and `ceiling` ("full jitter").
    @Sendable package static func fullJitter(_ ceiling: Duration) -> Duration {
        let nanoseconds = max(0, Int64(ceiling.timeInterval * 1e9))
        return .nanoseconds(nanoseconds == 0 ? 0 : Int64.random(in: 0...nanoseconds))
    }
}

extension RetryOptions: Decodable {
    private enum CodingKeys: String, CodingKey {
        case maxAttempts = "attempts"
        case baseDelay, maxDelay
        case retriesSaves = "retrySaves"
    }

    /// Reads `{ attempts: 4, base-delay: 200ms, max-delay: 30s, retry-saves: false }`; a key
    /// left out keeps the default of `init`.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        let defaults = RetryOptions()
        self.init(
            maxAttempts: try container.decodeIfPresent(PositiveCount.self, forKey: .maxAttempts)?.value
                ?? defaults.maxAttempts,
            baseDelay: try container.decodeIfPresent(TimeSpan.self, forKey: .baseDelay)?.duration ?? defaults.baseDelay,
            maxDelay: try container.decodeIfPresent(TimeSpan.self, forKey: .maxDelay)?.duration ?? defaults.maxDelay,
            retriesSaves: try container.decodeIfPresent(Bool.self, forKey: .retriesSaves) ?? defaults.retriesSaves)
    }
}
