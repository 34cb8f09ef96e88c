import StoreChain

/// A save's exchange with the backend, raced against how long the app waits for it
/// (`OutboxOptions.acknowledgeAfter`). Whoever is still there when it ends records its outcome:
/// the app's save, when the backend answered in time; the exchange itself, when the app was
/// already answered `pending`. An app's save that is cancelled while it waits cancels the
/// exchange (the save is recorded, and sent again later).
final class SaveExchange: Sendable {
    typealias Outcome = Result<StoreResponse, any Error>

    private enum Phase {
        case waiting
        case answered(Outcome)
        case acknowledged
    }

    private let phase = Locked<Phase>(.waiting)
    private let ended: AsyncStream<Void>
    private let end: AsyncStream<Void>.Continuation
    private let abandoned: AsyncStream<Void>
    private let abandon: AsyncStream<Void>.Continuation

    init() {
        (ended, end) = AsyncStream.makeStream(of: Void.self)
        (abandoned, abandon) = AsyncStream.makeStream(of: Void.self)
    }

    /// Runs the exchange (`send`) to its end, or until the app's save is cancelled while it
    /// waits; then hands the outcome to the app's save if it still waits (`nil`), or returns it
    /// for the exchange to record.
    func run(_ send: @escaping @Sendable () async throws -> StoreResponse) async -> Outcome? {
        let outcome = await withTaskGroup(of: Outcome?.self) { [abandoned] group in
            group.addTask {
                do { return .success(try await send()) } catch { return .failure(error) }
            }
            group.addTask {
                for await _ in abandoned {}
                return nil
            }
            var outcome: Outcome?
            for await finished in group {
                if let finished {
                    outcome = finished
                    break
                }
                group.cancelAll()
            }
            group.cancelAll()
            return outcome ?? .failure(CancellationError())
        }
        let handedOver = phase.withLock { phase in
            guard case .waiting = phase else { return false }
            phase = .answered(outcome)
            return true
        }
        end.finish()
        abandon.finish()
        return handedOver ? nil : outcome
    }

    /// The outcome, if the exchange ends within `limit` on `clock`; `nil` when the time ran out
    /// first (the app is answered `pending`, and the exchange records its own outcome). A
    /// cancelled wait cancels the exchange and takes its outcome.
    func outcome(within limit: Duration, clock: any StoreClock) async -> Outcome? {
        await withTaskGroup(of: Void.self) { [ended] group in
            group.addTask { for await _ in ended {} }
            group.addTask { try? await clock.sleep(for: limit) }
            await group.next()
            group.cancelAll()
        }
        if Task.isCancelled {
            abandon.finish()
            for await _ in ended {}
        }
        return phase.withLock { phase in
            if case .answered(let outcome) = phase { return outcome }
            phase = .acknowledged
            return nil
        }
    }
}
