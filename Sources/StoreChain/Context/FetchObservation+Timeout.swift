import Foundation

extension FetchObservation {
    /// The current result, once: `let bands = try await context.observe(request).first()`.
    ///
    /// - Throws: the fetch's error, or `CancellationError` when the task is cancelled first.
    public func first() async throws -> [ManagedObject] {
        var results = makeAsyncIterator()
        guard let result = try await results.next() else { throw CancellationError() }
        return result
    }

    /// The same results, failing with `timed-out` when none comes within `limit` of the start
    /// or of the previous one. An observation emits only when its result changes, so this is
    /// how to wait for a change without waiting forever:
    ///
    /// ```swift
    /// var results = context.observe(request).timeout(.seconds(5)).makeAsyncIterator()
    /// let before = try await results.next()
    /// try await context.save()
    /// let after = try await results.next()     // or `timed-out` after 5 s without a change
    /// ```
    public func timeout(_ limit: Duration, clock: any StoreClock = SystemClock()) -> FetchObservation {
        FetchObservation { [start] in
            let (source, sourceTask) = start()
            let (stream, continuation) = AsyncThrowingStream.makeStream(of: [ManagedObject].self)
            let deadline = Deadline(clock.now.addingTimeInterval(limit.timeInterval))
            let watchdog = Task {
                while !Task.isCancelled {
                    let due = deadline.date.withLock { $0 }
                    do { try await clock.sleep(until: due) } catch { return }
                    guard clock.now >= deadline.date.withLock({ $0 }) else { continue }
                    continuation.finish(
                        throwing: StoreChainError(
                            .timedOut, "the observation gave no result within \(limit)",
                            suggestion: "results come only when they change; allow longer or check the change"))
                    sourceTask.cancel()
                    return
                }
            }
            let forwarder = Task {
                do {
                    for try await result in source {
                        deadline.date.withLock { $0 = clock.now.addingTimeInterval(limit.timeInterval) }
                        continuation.yield(result)
                    }
                    continuation.finish()
                } catch {
                    continuation.finish(throwing: error)
                }
                watchdog.cancel()
            }
            continuation.onTermination = { _ in
                forwarder.cancel()
                watchdog.cancel()
                sourceTask.cancel()
            }
            return (stream, forwarder)
        }
    }
}

/// When an observation with a timeout fails if no result has come, shared by its two tasks.
private final class Deadline: Sendable {
    let date: Locked<Date>

    init(_ date: Date) {
        self.date = Locked(date)
    }
}
