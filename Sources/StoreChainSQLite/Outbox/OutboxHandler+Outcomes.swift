import Foundation
import StoreChain

/// What the outbox does when a save's exchange with the backend ends, whoever sent it (the app's
/// save, an exchange that went on after the app heard `pending`, or a replay).
extension OutboxHandler {
    /// Records the outcome of a save's exchange that ended after the app was answered
    /// `pending`, as a replay's would be: sent (the change event tells the app the permanent IDs),
    /// kept for another attempt, settled by the conflict policy, or refused and marked failed.
    func recordLate(_ entry: OutboxEntry, _ outcome: Result<StoreResponse, any Error>, context: RequestContext)
        async
    {
        var entry = entry
        do {
            let result: SaveResult
            do {
                result = try outcome.get().saveResult()
            } catch let error as StoreChainError where error.isTransient {
                try await attempted(&entry, error, context: context)
                backendUnavailable(error, context: context)
                return
            } catch is CancellationError {
                scheduleSend(after: options.retryDelay, context: context)
                return
            } catch let error as StoreChainError where error.isConflict {
                // Settled by the conflict policy; a save left to send goes with the next send.
                _ = try await resolveConflict(&entry, error, context: context)
                return
            } catch {
                try await refused(&entry, error, context: context)
                return
            }
            try await completed([entry], result)
            context.events.publish(sentEvent(entry, result))
        } catch {
            context.logger.warning(
                "outbox: recording the outcome of a save failed; it is sent again",
                metadata: ["entry": "\(entry.id)", "error": "\(error)"])
        }
    }

    /// The entries reached the backend: they leave the outbox (in one transaction), and the
    /// saves after them take the permanent IDs of what they inserted.
    func completed(_ entries: [OutboxEntry], _ result: SaveResult) async throws {
        let ids = entries.map(\.id)
        // Later updates of the same objects were based on the versions these replaced.
        var versions: [ObjectID: VersionChange] = [:]
        let made = Dictionary(result.nodes.map { ($0.id, $0.version) }, uniquingKeysWith: { first, _ in first })
        for update in entries.flatMap(\.changes.updated) {
            guard let from = update.version, versions[update.id] == nil, let to = made[update.id] ?? nil else {
                continue
            }
            versions[update.id] = VersionChange(from: from, to: to)
        }
        try await withFile { [versions] file in
            try file.remove(ids, remapping: result.permanentIDs, rebasing: versions)
        }
        state.withLock { $0.failures = 0 }
        reached(ids, result)
        try await countPending()
    }

    /// The backend took the entries: reads stop showing them over its answers, and what they
    /// inserted is known by its permanent ID. (Again when they leave the file: `completed`.)
    func reached(_ ids: [Int64], _ result: SaveResult) {
        state.withLock { state in
            state.permanentIDs.merge(result.permanentIDs) { _, new in new }
            for id in ids { state.writes.remove(id) }
            state.writes.remap(result.permanentIDs)
        }
    }

    /// The backend could not take the entry now: it stays pending, its attempt counted.
    func attempted(_ entry: inout OutboxEntry, _ error: StoreChainError, context: RequestContext) async throws {
        entry.attempts += 1
        entry.lastError = error.description
        try await withFile { [entry] file in try file.update(entry) }
        context.logger.notice(
            "outbox: the backend cannot take a save now; it is kept and sent again",
            metadata: ["entry": "\(entry.id)", "attempts": "\(entry.attempts)", "error": "\(error.message)"])
    }

    /// The backend could not take saves: the next attempt waits longer, and is scheduled.
    func backendUnavailable(_ error: StoreChainError, context: RequestContext) {
        let failures = state.withLock { state in
            state.failures += 1
            state.lastFailureWasUnreachable = error.code == .transport || error.code == .timedOut
            return state.failures
        }
        scheduleSend(after: options.delay(afterFailures: failures), context: context)
    }

    /// The backend refused a replayed entry for good: it is kept, marked failed, and what the
    /// app saw of it is withdrawn.
    func refused(_ entry: inout OutboxEntry, _ error: any Error, context: RequestContext) async throws {
        let rejection =
            (error as? StoreChainError)
            ?? StoreChainError(.saveFailed, "\(error)", suggestion: "inspect the entry with 'storechain outbox list'")
        entry.state = .failed
        entry.attempts += 1
        entry.lastError = rejection.description
        try await withFile { [entry] file in try file.update(entry) }
        state.withLock { [id = entry.id] in $0.writes.remove(id) }
        try await countPending()
        context.logger.warning(
            "outbox: the backend refused a saved change; it is kept as failed",
            metadata: ["entry": "\(entry.id)", "error": "\(rejection.message)"])
        let ids = Set(entry.objectIDs)
        let event = ChangeEvent(
            deleted: Set(entry.changes.inserted.map(\.id)), invalidatedEntities: entry.changes.entities,
            source: name, outbox: OutboxOutcome(rejected: ids, rejection: rejection.description))
        // The caches above showed the save in the windows it joined: those go, and its inserts.
        await context.services.forgetInCaches(event, context: context)
        context.events.publish(event)
        // The caches above hold the optimistic values: reading each object again replaces them,
        // and reading again the lists an inserted object was shown in takes it out of them.
        for id in ids where !id.isTemporary {
            _ = try? await context.sendOnOwnAccount(.objectFault(id), cachePolicy: .reload)
        }
        var joined: [ObjectID: Set<String>] = [:]  // each list once, however many objects joined it
        for (owner, list) in entry.changes.inserted.flatMap(model.listsJoined(by:)) {
            joined[owner, default: []].insert(list)
        }
        for (owner, lists) in joined {
            for list in lists {
                _ = try? await context.sendOnOwnAccount(
                    .relationshipFault(owner, relationship: list), cachePolicy: .reload)
            }
        }
    }

    func sentEvent(_ entry: OutboxEntry, _ result: SaveResult) -> ChangeEvent {
        let changes = entry.changes
        let inserted = Set(changes.inserted.map { result.permanentIDs[$0.id] ?? $0.id })
        return ChangeEvent(
            inserted: inserted, updated: Set(changes.updated.map(\.id)), deleted: Set(changes.deleted),
            invalidatedEntities: changes.entities.union(result.nodes.map(\.id.entity)), nodes: result.nodes,
            permanentIDs: result.permanentIDs, source: name,
            outbox: OutboxOutcome(sent: inserted.union(changes.updated.map(\.id)).union(changes.deleted)))
    }
}
