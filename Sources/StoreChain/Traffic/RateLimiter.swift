import Foundation

/// A token bucket with a burst, a maximum of requests in flight, and pauses the backend asks for.
///
/// Slots are reserved in order (the generic cell rate algorithm), so waiting callers do not race:
/// in any interval of length T at most `burst + rate × T` requests start. Share one limiter
/// between chains to share one limit (for example, every chain that talks to one host), and give
/// it a `SharedRateLimit` to share the limit between processes.
public final class RateLimiter: Sendable {
    /// The rate, burst, in-flight limit and mode.
    public let options: RateLimitOptions
    /// Where slots are reserved across processes, if anywhere.
    public let shared: (any SharedRateLimit)?

    private struct State {
        /// The theoretical arrival time of the next request.
        var nextArrival: Date?
        var pausedUntil: Date?
        /// Bumped by every pause, so callers that reserved a slot before it reserve again.
        var pauseGeneration = 0
        var inFlight = 0
        var waiting: [(id: Int, continuation: CheckedContinuation<Void, any Error>)] = []
        var nextWaiterID = 0
        /// What the backend last said of its own limit, and when.
        var backend: (status: RateLimitStatus, at: Date)?
    }

    private let state = Locked(State())

    /// A limiter for this process alone, or (with `shared`) for every process sharing its slots.
    public init(options: RateLimitOptions, shared: (any SharedRateLimit)? = nil) {
        self.options = options
        self.shared = shared
    }

    private var interval: TimeInterval { 1 / options.rate }
    private var tolerance: TimeInterval { Double(options.burst - 1) * interval }

    /// Waits for an in-flight permit (unless `permit` is false) and a rate slot (or, failing
    /// fast, throws `rateLimited` saying when to retry). Call `release()` when a request that
    /// took a permit is done.
    public func acquire(context: RequestContext, permit: Bool = true) async throws {
        if permit { try await acquirePermit(context: context) }
        do {
            try await waitForSlot(context: context)
        } catch {
            if permit { release() }
            throw error
        }
    }

    /// Gives back the in-flight permit.
    public func release() {
        let waiter = state.withLock { state -> CheckedContinuation<Void, any Error>? in
            guard !state.waiting.isEmpty else {
                state.inFlight -= 1
                return nil
            }
            return state.waiting.removeFirst().continuation  // the permit passes to the waiter
        }
        waiter?.resume()
    }

    /// Stops every request from starting before `date` (a 429 or 503 with `Retry-After`), in
    /// every process sharing the limit.
    public func pause(until date: Date) async {
        state.withLock { state in
            guard date > (state.pausedUntil ?? .distantPast) else { return }
            state.pausedUntil = date
            state.pauseGeneration += 1
        }
        try? await shared?.pause(until: date)
    }

    /// Learns from what the backend said: `Retry-After` on 429 / 503 pauses; a low
    /// `X-RateLimit-Remaining` spreads the remaining requests until `X-RateLimit-Reset`.
    func learn(from status: RateLimitStatus?, now: Date) async {
        guard let status else { return }
        state.withLock { $0.backend = (status, now) }
        let remaining = status.remaining
        let reset = status.resetDate(now: now)
        guard reset > now else { return }
        if remaining <= 0 {
            await pause(until: reset)
            return
        }
        let spacing = reset.timeIntervalSince(now) / Double(remaining)
        guard spacing > interval else { return }
        state.withLock { state in
            state.nextArrival = max(state.nextArrival ?? now, now + spacing)
        }
        try? await shared?.delayNextSlot(until: now + spacing)
    }

    private func acquirePermit(context: RequestContext) async throws {
        guard let limit = options.maxInFlight else {
            // Counted all the same, so what is in flight is known (`release()` counts it off).
            state.withLock { $0.inFlight += 1 }
            return
        }
        let id: Int? = state.withLock { state in
            if state.inFlight < limit && state.waiting.isEmpty {
                state.inFlight += 1
                return nil
            }
            state.nextWaiterID += 1
            return state.nextWaiterID
        }
        guard let id else { return }
        if options.mode == .failFast {
            throw StoreChainError(
                .rateLimited, "\(limit) requests are already in flight", suggestion: "retry when one has finished")
        }
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                let cancelled = state.withLock { state -> Bool in
                    if Task.isCancelled { return true }
                    state.waiting.append((id, continuation))
                    return false
                }
                if cancelled { continuation.resume(throwing: CancellationError()) }
            }
        } onCancel: {
            let waiter = state.withLock { state -> CheckedContinuation<Void, any Error>? in
                guard let index = state.waiting.firstIndex(where: { $0.id == id }) else { return nil }
                return state.waiting.remove(at: index).continuation
            }
            waiter?.resume(throwing: CancellationError())
        }
    }

    private func waitForSlot(context: RequestContext) async throws {
        while true {
            let now = context.clock.now
            let reserved = try await sharedSlot(now: now, context: context)
            let (start, generation) = try state.withLock { state throws(StoreChainError) -> (Date, Int) in
                if let reserved { return (reserved, state.pauseGeneration) }
                let arrival = max(state.nextArrival ?? now, now)
                let start = max(arrival - tolerance, now, state.pausedUntil ?? now)
                if start > now {
                    if options.mode == .failFast {
                        throw Self.limited(until: start, now: now, "the rate limit of \(options.rate)/s is reached")
                    }
                    if let deadline = context.deadline, start >= deadline {
                        throw Self.limited(until: start, now: now, "the rate limit leaves no slot before the deadline")
                    }
                }
                state.nextArrival = max(arrival, start) + interval
                return (start, state.pauseGeneration)
            }
            if start > now {
                context[StoreMetricsKey.self]?.time("rate_limit_wait", since: now, now: start)
                try await context.withSpan("storechain.rate-limit.wait") { span in
                    span?.attributes["storechain.wait.seconds"] = start.timeIntervalSince(now)
                    try await context.clock.sleep(until: start)
                }
            }
            let paused = state.withLock { state in
                state.pauseGeneration != generation && (state.pausedUntil ?? .distantPast) > context.clock.now
            }
            if !paused { return }
        }
    }

    /// The start of a slot reserved in the shared state, or `nil` when there is none (or it
    /// failed: this process then limits itself alone). Throws when the slot would come too late.
    private func sharedSlot(now: Date, context: RequestContext) async throws(StoreChainError) -> Date? {
        guard let shared else { return nil }
        let refuseAfter = options.mode == .failFast ? now : context.deadline
        let reserved: Date
        do {
            reserved = try await shared.reserve(
                now: now, interval: interval, tolerance: tolerance, refuseAfter: refuseAfter)
        } catch {
            context.logger.debug(
                "rate-limit: the shared limit cannot be reached, limiting this process alone: \(error)")
            return nil
        }
        // A pause this process learned of (and may not have shared, its database being down).
        let start = max(reserved, state.withLock { $0.pausedUntil } ?? reserved)
        if start > now, let refuseAfter, start >= refuseAfter || options.mode == .failFast {
            let message =
                options.mode == .failFast
                ? "the rate limit of \(options.rate)/s is reached" : "the rate limit leaves no slot before the deadline"
            throw Self.limited(until: start, now: now, message)
        }
        return start
    }

    private static func limited(until start: Date, now: Date, _ message: String) -> StoreChainError {
        var error = StoreChainError(
            .rateLimited, message, suggestion: "retry in \(String(format: "%.1f", start.timeIntervalSince(now)))s")
        error.retryAfter = .milliseconds(Int((start.timeIntervalSince(now) * 1_000).rounded(.up)))
        return error
    }
}

/// How `RateLimitHandler` limits.
public struct RateLimitOptions: Sendable, Hashable {
    /// What a request does when no slot is free.
    public enum Mode: String, Sendable, Hashable, CaseIterable, Decodable {
        /// Wait for a slot, within the request's deadline and cancellation.
        case wait
        /// Fail at once with a `rateLimited` error that says when to retry.
        case failFast = "fail-fast"

        public init(from decoder: any Decoder) throws {
            self = try ConfigurationDecoding.enumCase(Self.self, from: decoder, what: "rate-limit mode")
        }
    }

    /// Requests per second.
    public var rate: Double
    /// How many requests may start at once after a quiet spell.
    public var burst: Int
    /// Requests that may be under way at once; `nil`: no limit.
    public var maxInFlight: Int?
    /// Whether a request waits for a slot or fails at once.
    public var mode: Mode

    /// `rate` requests per second, `burst` at once after a quiet spell.
    public init(rate: Double, burst: Int = 1, maxInFlight: Int? = nil, mode: Mode = .wait) {
        self.rate = max(rate, 1e-6)
        self.burst = max(1, burst)
        self.maxInFlight = maxInFlight.map { max(1, $0) }
        self.mode = mode
    }
}

extension RateLimitOptions: Decodable {
    private enum CodingKeys: String, CodingKey {
        case rate, burst, maxInFlight, mode
    }

    /// Reads `{ rate: 10/s, burst: 20, max-in-flight: 4, mode: wait }` (`rate` required); a key
    /// left out keeps the default of `init`.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        let rate = try container.decode(Rate.self, forKey: .rate).perSecond
        let defaults = RateLimitOptions(rate: rate)
        self.init(
            rate: rate,
            burst: try container.decodeIfPresent(PositiveCount.self, forKey: .burst)?.value ?? defaults.burst,
            maxInFlight: try container.decodeIfPresent(PositiveCount.self, forKey: .maxInFlight)?.value
                ?? defaults.maxInFlight,
            mode: try container.decodeIfPresent(Mode.self, forKey: .mode) ?? defaults.mode)
    }
}

extension RateLimiter {
    /// Where the limiter stands at `now` (in this process): what the inspector shows.
    package func snapshot(at now: Date) -> RateLimiterState {
        state.withLock { state in
            let nextArrival = max(state.nextArrival ?? now, now)
            let earliest = max(nextArrival - tolerance, now)
            // Starts the bucket allows now: the burst less the slots reserved ahead of now.
            let ahead = Int((nextArrival.timeIntervalSince(now) / interval).rounded(.up))
            let paused = state.pausedUntil.flatMap { $0 > now ? $0 : nil }
            // What the backend said holds until its window resets.
            let backend = state.backend.flatMap { backend in
                let reset = backend.status.resetDate(now: backend.at)
                return reset > now ? (remaining: backend.status.remaining, reset: reset) : nil
            }
            return RateLimiterState(
                options: options, inFlight: state.inFlight, waiting: state.waiting.count,
                available: paused == nil ? max(0, options.burst - ahead) : 0,
                nextStart: max(earliest, paused ?? now), pausedUntil: paused, backendRemaining: backend?.remaining,
                backendReset: backend?.reset)
        }
    }
}
