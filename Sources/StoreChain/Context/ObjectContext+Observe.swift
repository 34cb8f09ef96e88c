extension ObjectContext {
    /// The current result of `request`, then the result again after every change that may
    /// affect it (saves through the chain, events from handlers), when it differs.
    ///
    /// The first result comes even when nothing is cached yet: it is fetched through the chain;
    /// when that fails, the observation ends with the error. A later refetch that fails
    /// transiently (the backend out of reach, a timeout: `StoreChainError.isTransient`) is
    /// logged and delivers nothing: the last result stands until the refetch is tried again, on
    /// the chain's clock after a second (doubling up to a minute), or the next change comes (a
    /// save an outbox keeps while offline does not end the observation). Other
    /// errors end it. The observation also ends when its iterator is dropped, its task is
    /// cancelled, or the chain shuts down.
    ///
    /// ```swift
    /// for try await bands in context.observe(FetchRequest(entity: "Band")) { render(bands) }
    /// ```
    public func observe(_ request: FetchRequest) -> FetchObservation {
        FetchObservation { [self] in
            let (events, endEvents, _) = chain.events.subscription()
            // A request that does not fit the model fails its first fetch, which ends the observation.
            let relevant = (try? FetchPlan.planned(request, model: model))?.observedEntities ?? [request.entity]
            let (stream, continuation) = AsyncThrowingStream.makeStream(of: [ManagedObject].self)
            // Changes while a refetch runs make one more refetch after it, not one each.
            let (refetches, refetch) = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1))
            let relay = Task {
                for await event in events
                where event.isGap || event.marksStale || !event.entities.isDisjoint(with: relevant) {
                    refetch.yield()
                }
                refetch.finish()
            }
            let task = Task {
                defer {
                    relay.cancel()
                    endEvents()
                }
                var retry = ObservationRetry(clock: chain.clock, refetch: refetch)
                do {
                    var last = try await snapshot(request)
                    continuation.yield(last.objects)
                    for await _ in refetches {
                        let next: (objects: [ManagedObject], nodes: [Node?])
                        do {
                            next = try await snapshot(request)
                            retry.succeeded()
                        } catch let error as StoreChainError where error.isTransient {
                            chain.logger.warning(
                                "observation of \(request): refetch failed, the last result stands until it is tried again in \(retry.delay): \(error)"
                            )
                            retry.failed()
                            continue
                        }
                        if next.nodes != last.nodes {
                            continuation.yield(next.objects)
                            last = next
                        }
                    }
                    continuation.finish()
                } catch {
                    continuation.finish(throwing: error)
                }
                retry.succeeded()
            }
            continuation.onTermination = { _ in task.cancel() }
            return (stream, task)
        }
    }

    /// The request's objects and their rows, to tell whether the result changed. An object whose
    /// row is gone (an event made it a fault after the fetch) counts as `nil`, not as absent: left
    /// out, a result with a new member could compare equal to the last one and not be delivered.
    private func snapshot(_ request: FetchRequest) async throws -> (objects: [ManagedObject], nodes: [Node?]) {
        let objects = try await fetch(request)
        let nodes = state.withLock { state in objects.map { state.table.row(of: $0) } }
        return (objects, nodes)
    }
}
