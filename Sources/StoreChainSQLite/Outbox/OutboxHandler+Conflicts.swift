import Foundation
import StoreChain

extension OutboxHandler {
    /// Settles a replayed save the backend refused because objects it updates changed since
    /// the versions its updates were based on, by the outbox's conflict policy:
    ///
    /// - `server-wins`: the conflicting updates are dropped; the app reads the backend's objects.
    /// - `client-wins`: they are sent again without a version (unconditionally).
    /// - `merge`: their changes are sent again based on the backend's current version.
    /// - a named resolver decides for each.
    ///
    /// The backend's current objects are read through the whole chain (`reload`), so the caches
    /// hold them; a change event names every object settled (`ChangeEvent.resolved`). A save
    /// with nothing left to send leaves the outbox; otherwise it is sent again with the same
    /// idempotency key, so the parts of it the backend took before the conflict (the inserts of
    /// a save that also updates) are not made twice. (A backend does not keep a 412 or 409 as
    /// the answer to a key: nothing was done.)
    /// When no update of the save is out of date (a 409 for another reason), the save is
    /// refused as any other.
    ///
    /// - Returns: whether the entry must be sent again.
    func resolveConflict(_ entry: inout OutboxEntry, _ error: StoreChainError, context: RequestContext)
        async throws -> Bool
    {
        let policy = options.conflictPolicy
        // The backend's objects as the app will read them without this save.
        let id = entry.id
        state.withLock { $0.writes.remove(id) }
        var changes = entry.changes
        var resolved: [ObjectID: ConflictPolicy] = [:]
        var kept: [Node] = []
        var dropped = Set<ObjectID>()
        for (index, update) in changes.updated.enumerated() {
            guard let based = update.version else { continue }
            let server = try await current(update.id, context: context)
            guard server?.version != based else { continue }
            resolved[update.id] = policy
            var decision: ConflictDecision
            switch policy {
            case .serverWins: decision = .keepServer
            case .clientWins:
                var unconditional = update
                unconditional.version = nil
                decision = .send(unconditional)
            case .merge:
                guard let server else {
                    decision = .keepServer
                    break
                }
                var rebased = update
                rebased.version = server.version
                decision = .send(rebased)
            case .named(let name):
                guard let resolver = resolvers[name] else {
                    decision = .keepServer
                    break
                }
                decision = try await resolver(OutboxConflict(entry: id, local: update, server: server))
            }
            switch decision {
            case .keepServer:
                dropped.insert(update.id)
                if let server { kept.append(server) }
            case .send(var replacement):
                replacement.id = update.id
                changes.updated[index] = replacement
            }
        }
        guard !resolved.isEmpty else {
            state.withLock { $0.writes.add(id, entry.changes) }
            try await refused(&entry, error, context: context)
            return false
        }
        changes.updated.removeAll { dropped.contains($0.id) }
        let resend = !changes.isEmpty
        if resend {
            entry.changes = changes
            try await withFile { [entry] file in try file.update(entry) }
            state.withLock { [changes] in $0.writes.add(id, changes) }
        } else {
            try await withFile { file in try file.remove([id]) }
            try await countPending()
        }
        context.logger.notice(
            "outbox: a saved change met a newer version on the backend; settled by the conflict policy",
            metadata: [
                "entry": "\(id)", "policy": "\(policy)", "objects": "\(resolved.keys.map(\.description).sorted())",
            ])
        context.events.publish(
            ChangeEvent(
                updated: Set(resolved.keys), invalidatedEntities: Set(resolved.keys.map(\.entity)), nodes: kept,
                source: name, sent: dropped, resolved: resolved))
        return resend
    }

    /// The backend's current object, read through the whole chain so the caches take it.
    private func current(_ id: ObjectID, context: RequestContext) async throws -> Node? {
        if let response = try await context.sendOnOwnAccount(.objectFault(id), cachePolicy: .reload) {
            return try response.objectNode()
        }
        throw StoreChainError(
            .unavailable, "the outbox has no chain to read \(id) through to settle a conflict",
            suggestion: "put the outbox handler in a Chain")
    }
}
