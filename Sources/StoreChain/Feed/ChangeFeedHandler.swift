import Foundation
import Synchronization

/// Follows the backend's change feed and tells the chain of every change, so caches forget what
/// it makes wrong and observers of an affected fetch get the new result without polling.
///
/// It is a handler of its own, not part of the remote terminal, so that each exchange with the
/// feed is a chain request (`StoreRequest.changes`) that rate limiting, retry, logging and tracing
/// see, sent from the top of the chain like any request a handler makes on its own account; the
/// terminal only knows how to ask its backend (the `changes` mapping of the remote options).
///
/// 1. When the chain is built it asks for the feed's current position (no cursor). What the
///    chain reads before that answer comes may miss a change made meanwhile, so it is announced as
///    possibly changed once the position is known (`ReadsBeforePosition`); the same after a gap.
///    Restored from `cursorFile`, it first asks what changed since the kept position, at once
///    (no long poll), and reads wait until those changes are applied: a disk cache that outlived
///    the process may hold what they changed. Past `catchUpWait`, or if the feed fails, the
///    caches are made stale instead and the reads go on (`CatchUpGate`). This handler must be
///    above the caches for its reads to wait.
/// 2. Then, in a loop, for the changes since the last position, held open up to
///    `ChangeFeedOptions.wait` (a long poll), at most one request per `interval`; or, where the
///    terminal answers with a stream (a backend's event stream, `ChangesRequest.stream`), one
///    request for as long as the stream is healthy, each page applied as it arrives. A stream the
///    backend ends is asked for again at once, from where it stopped; one that drops is a failure.
/// 3. Each answer with changes becomes one `ChangeEvent`, in the backend's order. An answer that
///    says the position is too old (a gap) becomes a gap event: every cache forgets what it
///    holds and every observation refetches, since nobody can name what was missed.
/// 4. A failure is logged and asked again from the same position after a backoff with jitter
///    (`retry-base-delay`, or the reconnection time the backend last asked for, doubling up to
///    `retry-max-delay`), so a dropped connection or a restarted backend resumes where it
///    stopped, losing and repeating nothing. With `max-outage`, a feed that has not answered for
///    that long makes what the caches hold stale and every observation refetch, once per outage:
///    changes it cannot tell of may be piling up.
///
/// ```swift
/// let chain = Chain(terminal: remote) {
///     ChangeFeedHandler(options: ChangeFeedOptions(wait: .seconds(25)))
///     MemoryCache(model: model)
/// }
/// ```
public final class ChangeFeedHandler: ChangeSource {
    public let name = "change-feed"
    /// How it asks, waits and recovers.
    public let options: ChangeFeedOptions
    /// Picks the wait after a failure from its ceiling.
    private let jitter: @Sendable (Duration) -> Duration
    /// What the chain read while the feed had no position; `nil` while it has one.
    private let readsBeforePosition = Locked<ReadsBeforePosition?>(ReadsBeforePosition())
    /// Whether `readsBeforePosition` is recording, set in its lock: once the feed has its
    /// position, a read costs one load instead of taking the lock.
    private let recording = Atomic<Bool>(true)
    /// Where reads wait while a feed restored from its cursor file catches up.
    private let catchUp: CatchUpGate

    /// A change feed with `options`, started by the chain it is part of.
    public convenience init(options: ChangeFeedOptions = ChangeFeedOptions()) {
        self.init(options: options, jitter: RetryPolicy.fullJitter)
    }

    /// A feed handler whose `jitter` picks the wait after failures from its ceiling (tests pass
    /// `{ $0 }`).
    package init(options: ChangeFeedOptions, jitter: @escaping @Sendable (Duration) -> Duration) {
        self.options = options
        self.jitter = jitter
        catchUp = CatchUpGate(closed: options.cursorFile != nil)
    }

    public func handle(_ request: StoreRequest, context: RequestContext, next: NextResponder) async throws
        -> StoreResponse
    {
        let reads = ReadsBeforePosition.reads(request)
        if reads { try await catchUp.wait() }
        let recorded =
            reads && recording.load(ordering: .acquiring)
            && readsBeforePosition.withLock { reads in
                reads?.record(request)
                return reads != nil
            }
        let response = try await next(request, context)
        if recorded { readsBeforePosition.withLock { $0?.record(response) } }
        return response
    }

    /// Returns once `count` reads wait for the feed to catch up after a restart (for tests).
    package func waitForReadsWaitingToCatchUp(_ count: Int) async throws {
        try await catchUp.waitForWaitingReads(count)
    }

    /// The event for what was read before the feed knew its position, now that it does.
    private func positionKnown() -> ChangeEvent? {
        readsBeforePosition.withLock { reads in
            defer {
                reads = nil
                recording.store(false, ordering: .releasing)
            }
            return reads?.event(source: name)
        }
    }

    public func follow(services: ChainServices, apply: @escaping @Sendable (ChangeEvent) async -> Void) async {
        let clock = services.clock
        var backoff = Self.backoff(from: options.retryBaseDelay, upTo: options.retryMaxDelay)
        var cursor: String?
        // The reads are let through however following ends (the chain shuts down, say).
        defer { catchUp.open() }
        if let file = options.cursorFile {
            let kept = FeedCursorFile(path: file).read()
            cursor = kept.cursor
            if let problem = kept.problem {
                // Where the feed stood is not known, so neither is what changed meanwhile.
                services.logger.warning("change-feed: \(problem); caches forget what they hold")
                await apply(ChangeEvent(source: name, scope: .gap))
            }
        }
        if cursor != nil { _ = positionKnown() }
        // Restored from a kept position: until what changed since is applied, reads wait.
        var catchingUp = cursor != nil
        if !catchingUp { catchUp.open() }
        let catchUpDeadline = catchingUp ? catchUpDeadline(services: services, apply: apply) : nil
        defer { catchUpDeadline?.cancel() }
        var failures = 0
        // When the feed last answered, and whether the caches were made stale since.
        var lastAnswer = clock.now
        var markedStale = false

        /// Applies one page and moves to the position it reached.
        func take(_ page: ChangeFeedPage) async {
            if failures > 0 {
                services.logger.info(
                    "change-feed: resumed after \(failures) failure(s), from \(cursor ?? "the current position")")
            }
            failures = 0
            lastAnswer = clock.now
            markedStale = false
            if let asked = page.reconnectionTime {
                backoff = Self.backoff(from: asked, upTo: max(asked, options.retryMaxDelay))
            }
            if page.isGap {
                services.logger.warning(
                    "change-feed: the backend cannot answer from \(cursor ?? "the current position") (a gap); caches forget what they hold and observers refetch"
                )
            }
            let reached = page.cursor ?? (page.isGap ? nil : cursor)
            if reached == nil {
                readsBeforePosition.withLock { reads in
                    reads = reads ?? ReadsBeforePosition()
                    recording.store(true, ordering: .releasing)
                }
            }
            if page.isGap || !page.changes.isEmpty || !page.invalidatedEntities.isEmpty {
                await apply(page.event(source: name))
            }
            if cursor == nil, reached != nil, let event = positionKnown() { await apply(event) }
            // Caught up once the backend has nothing more since the kept position.
            if catchingUp, page.changes.isEmpty || page.isGap {
                catchingUp = false
                await caughtUp(unlessAfter: nil, services: services, apply: apply)
            }
            if reached != cursor, let file = options.cursorFile, let reached {
                if let problem = FeedCursorFile(path: file).write(reached) {
                    services.logger.warning("change-feed: \(problem)")
                }
            }
            cursor = reached
        }

        guard services.entry != nil else {
            services.logger.error("change-feed: stopped, it has no chain to ask for changes through")
            return
        }
        while !Task.isCancelled {
            let started = clock.now
            let context = RequestContext(services: services, cachePolicy: nil, deadline: nil)
            // The stream being read, if the backend answered with one.
            var following: ChangeStream?
            do {
                // Held open where the backend can stream; not while catching up, which ends when
                // the backend has nothing more to say.
                let request = ChangesRequest(
                    cursor: cursor, wait: catchingUp ? nil : options.wait, stream: !catchingUp)
                let response = try await context.sendOnOwnAccount(.changes(request))
                if case .changeStream(let stream) = response.result {
                    following = stream
                    services.logger.debug(
                        "change-feed: following \(stream) from \(cursor ?? "the current position"), held open")
                    defer { stream.close() }
                    var pages = 0
                    for try await page in stream {
                        await take(page)
                        pages += 1
                    }
                    lastAnswer = clock.now
                    // A stream that ends at once each time would otherwise be asked again in a loop.
                    guard pages > 0 else {
                        throw StoreChainError(.transport, "\(stream) ended before it said anything")
                    }
                    services.logger.info(
                        "change-feed: the backend ended \(stream); following it again from \(cursor ?? "the current position")"
                    )
                    continue
                }
                let page = try response.changeFeedPage()
                // More may be waiting after a page with changes, and nothing was asked yet after
                // the current position or a gap: ask at once. After an empty answer, not before
                // the interval is up.
                let waits = cursor != nil && page.changes.isEmpty && !page.isGap
                await take(page)
                if waits { try await clock.sleep(until: started.addingTimeInterval(options.interval.timeInterval)) }
            } catch {
                if Task.isCancelled || error is CancellationError { return }
                if let error = error as? StoreChainError, error.code == .noEndpoint {
                    services.logger.error("change-feed: stopped, the chain cannot answer it: \(error)")
                    return
                }
                if catchingUp {
                    catchingUp = false
                    await caughtUp(
                        unlessAfter: "asking for the changes since \(cursor ?? "now") failed", services: services,
                        apply: apply)
                }
                failures += 1
                let delay = jitter(backoff.ceiling(after: failures))
                if let following {
                    // It was answering until now: an outage is counted from the drop.
                    lastAnswer = clock.now
                    services.logger.warning(
                        "change-feed: \(following) dropped (\(error)); following it again from \(cursor ?? "the current position") in \(delay)"
                    )
                } else {
                    services.logger.warning(
                        "change-feed: asking for changes since \(cursor ?? "now") failed (\(error)); asking again in \(delay)"
                    )
                }
                let wake = clock.now.addingTimeInterval(delay.timeInterval)
                do {
                    if let maxOutage = options.maxOutage, !markedStale {
                        let staleAt = lastAnswer.addingTimeInterval(maxOutage.timeInterval)
                        if staleAt <= wake {
                            if staleAt > clock.now { try await clock.sleep(until: staleAt) }
                            services.logger.warning(
                                "change-feed: no answer for over \(maxOutage); what the caches hold is made stale and observers refetch"
                            )
                            await apply(ChangeEvent(source: name, scope: .stale))
                            markedStale = true
                        }
                    }
                    try await clock.sleep(until: wake)
                } catch { return }
            }
        }
    }

    /// Makes the caches stale and lets the reads through if the catch-up has not ended by
    /// `catchUpWait` on the chain's clock.
    private func catchUpDeadline(services: ChainServices, apply: @escaping @Sendable (ChangeEvent) async -> Void)
        -> Task<Void, Never>
    {
        let clock = services.clock
        let wait = options.catchUpWait
        return Task {
            guard (try? await clock.sleep(until: clock.now.addingTimeInterval(wait.timeInterval))) != nil else {
                return
            }
            await caughtUp(unlessAfter: "no answer within catch-up-wait (\(wait))", services: services, apply: apply)
        }
    }

    /// Ends the catch-up after a restart, once: lets the reads through, after making what the
    /// caches hold stale when `problem` says why what changed while the process was stopped is
    /// not known.
    private func caughtUp(
        unlessAfter problem: String?, services: ChainServices, apply: @Sendable (ChangeEvent) async -> Void
    ) async {
        guard catchUp.claim() else { return }
        if let problem {
            services.logger.warning(
                "change-feed: \(problem); what the caches kept from before the restart is made stale (revalidated before use)"
            )
            await apply(ChangeEvent(source: name, scope: .stale))
        }
        catchUp.open()
    }

    private static func backoff(from base: Duration, upTo ceiling: Duration) -> RetryPolicy {
        RetryPolicy(options: RetryOptions(baseDelay: base, maxDelay: ceiling))
    }
}
