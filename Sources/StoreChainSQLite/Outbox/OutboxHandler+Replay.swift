import StoreChain

extension OutboxHandler {
    /// Sends the waiting entries before `limit` (all when `nil`) from the chain's first handler.
    ///
    /// The entries are split into lanes (`OutboxLanes`): saves that depend on each other share
    /// a lane and go in the order made; up to `parallel-replay` lanes go at once. When the
    /// backend cannot take an entry, no lane starts another; the others finish what they sent.
    /// After a failure one request goes alone first, so that while the backend stays out of
    /// reach a save costs one attempt.
    ///
    /// - Returns: whether an entry is still pending (the backend is out of reach).
    func sendRecorded(before limit: Int64?, context: RequestContext) async throws -> Bool {
        let limit = limit ?? Int64.max
        // The waiting saves are in memory; failed ones (rare) are read for the inserts they hold.
        let failed = try await withFile { file in try file.entries(before: limit, state: .failed) }
        let waiting = state.withLock { $0.writes.saves }.filter { $0.id < limit }
        let entries = (failed.map { (id: $0.id, changes: $0.changes) } + waiting).sorted { $0.id < $1.id }
        var lanes = OutboxLanes(entries, model: model, separate: options.parallelReplay > 1).lanes[...]
        let stop = ReplayStop()
        if state.withLock({ $0.failures > 0 }), let first = lanes.first {
            // The lane then goes again from its start: what the probe sent is gone from the file,
            // and what it marked failed holds back the saves that depend on it.
            try await sendLane(first, stop: stop, requests: 1, context: context)
        }
        if lanes.count == 1, let lane = lanes.first {
            // Nothing to run beside it: on the caller's executor, without a task.
            try await sendLane(lane, stop: stop, context: context)
        } else {
            try await withThrowingTaskGroup { group in
                for _ in 0..<options.parallelReplay {
                    guard !stop.isStopped, let lane = lanes.popFirst() else { break }
                    group.addTask { try await self.sendLane(lane, stop: stop, context: context) }
                }
                while try await group.next() != nil {
                    guard !stop.isStopped, let lane = lanes.popFirst() else { continue }
                    group.addTask { try await self.sendLane(lane, stop: stop, context: context) }
                }
            }
        }
        if let error = stop.takeError() { backendUnavailable(error, context: context) }
        return stop.isStopped
    }

    /// Sends one lane's entries in order (those no longer in the outbox are skipped); stops at
    /// the first the backend cannot take yet, when another lane did, or after `requests`
    /// requests the backend answered.
    private func sendLane(
        _ lane: [Int64], stop: ReplayStop, requests: Int = .max, context: RequestContext
    ) async throws {
        var refusedInserts: [ObjectID: Int64] = [:]
        var conflicts: [Int64: Int] = [:]
        var answered = 0
        var index = 0
        // Entries up to this index are sent one at a time: a combined request was refused.
        var sentAlone = -1
        while index < lane.count, answered < requests, !stop.isStopped {
            let start = index
            index += 1
            // Read again: an entry before it may have given its objects permanent IDs, or
            // rebased its updates, since the lane was made.
            guard var entry = try await withFile({ [id = lane[start]] file in try file.entry(id) }) else {
                continue
            }
            entry.changes = entry.changes.remapping(state.withLock { $0.permanentIDs })
            guard entry.state == .pending else {
                if entry.state == .failed { for node in entry.changes.inserted { refusedInserts[node.id] = entry.id } }
                continue
            }
            if let failed = entry.changes.inserted.isEmpty && refusedInserts.isEmpty
                ? nil : refusedInserts.first(where: { entry.mentions([$0.key]) })
            {
                let error = StoreChainError(
                    .saveFailed,
                    "it refers to \(failed.key), whose insert (outbox entry \(failed.value)) the backend refused",
                    suggestion: "retry or discard entry \(failed.value) first")
                try await refused(&entry, error, context: context)
                for node in entry.changes.inserted { refusedInserts[node.id] = entry.id }
                continue
            }
            var batch = OutboxBatch(entry)
            if options.coalescesUpdates, start > sentAlone {
                batch = try await coalescing(batch, from: lane[index...])
                index = start + batch.entries.count
            }
            let key = batch.changes.idempotencyKey ?? ""
            state.withLock { $0.inFlight[key] = batch.entries.map(\.id) }
            defer { state.withLock { _ = $0.inFlight.removeValue(forKey: key) } }
            do {
                let request = StoreRequest.save(batch.changes)
                let response = try await context.sendOnOwnAccount(request)
                let result = try response.saveResult()
                guard !result.isPending else {
                    stop.stop(nil)
                    return
                }
                answered += 1
                try await completed(batch.entries, result)
                // One event per save, so that a context counting pending saves counts each.
                for sent in batch.entries { context.events.publish(sentEvent(sent, result)) }
            } catch let error as StoreChainError where error.isTransient {
                try await attempted(&entry, error, context: context)
                stop.stop(error)
                return
            } catch let error as CancellationError {
                throw error
            } catch  where batch.entries.count > 1 {
                // Which save the backend refuses is found by sending them one at a time.
                sentAlone = index - 1
                index = start
            } catch let error as StoreChainError where error.isConflict && conflicts[entry.id, default: 0] < 3 {
                conflicts[entry.id, default: 0] += 1
                if try await resolveConflict(&entry, error, context: context) { index = start }
            } catch {
                try await refused(&entry, error, context: context)
                for node in entry.changes.inserted { refusedInserts[node.id] = entry.id }
            }
        }
    }

    /// The batch with the waiting updates after it in its lane that can go in the same request.
    private func coalescing(_ batch: OutboxBatch, from following: ArraySlice<Int64>) async throws -> OutboxBatch {
        var batch = batch
        let permanentIDs = state.withLock { $0.permanentIDs }
        for id in following {
            guard var next = try await withFile({ file in try file.entry(id) }) else { break }
            next.changes = next.changes.remapping(permanentIDs)
            guard next.state == .pending, batch.absorb(next) else { break }
        }
        return batch
    }
}

/// Whether the lanes of one replay stop starting entries, and why.
final class ReplayStop: Sendable {
    private let state = Locked<(isStopped: Bool, error: StoreChainError?)>((false, nil))

    /// An entry could not be sent now: the lanes finish what they sent and start nothing more.
    var isStopped: Bool { state.withLock { $0.isStopped } }

    /// Stops the lanes; `error` is what the backend met, for the retry delay.
    func stop(_ error: StoreChainError?) {
        state.withLock { state in
            state.isStopped = true
            if let error { state.error = error }
        }
    }

    /// The error that stopped the lanes, given out once.
    func takeError() -> StoreChainError? {
        state.withLock { state in
            defer { state.error = nil }
            return state.error
        }
    }
}
