import Foundation
import StoreChain

extension OutboxHandler {
    /// Settles a replayed save the backend refused because objects it updates or deletes changed
    /// since the versions it was based on, by the outbox's conflict policy:
    ///
    /// - `server-wins`: the conflicting updates and deletes are dropped; the app reads the
    ///   backend's objects.
    /// - `client-wins`: they are sent again without a version (unconditionally).
    /// - `merge`: their changes are sent again based on the backend's current version (a delete
    ///   deletes the object as it is now).
    /// - a named resolver decides for each.
    ///
    /// The backend's current objects are read through the whole chain (`reload`), so the caches
    /// hold them; a change event names every object settled (`ChangeEvent.resolved`). A save
    /// with nothing left to send leaves the outbox; otherwise it is sent again with the same
    /// idempotency key, so the parts of it the backend took before the conflict (the inserts of
    /// a save that also updates) are not made twice. (A backend does not keep a 412 or 409 as
    /// the answer to a key: nothing was done.)
    /// When no update or delete of the save is out of date (a 409 for another reason), the save
    /// is refused as any other.
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
            switch try await decide(OutboxConflict(entry: id, local: update, server: server, isDelete: false)) {
            case .keepServer:
                dropped.insert(update.id)
                if let server { kept.append(server) }
            case .send(var replacement):
                replacement.id = update.id
                changes.updated[index] = replacement
            }
        }
        for deleted in changes.deleted {
            guard let based = changes.deletedVersions[deleted] else { continue }
            // Gone already: the delete stands (the backend answers it 404, which is as good).
            guard let server = try await current(deleted, context: context), server.version != based else {
                continue
            }
            resolved[deleted] = policy
            let local = Node(id: deleted, attributes: [:], version: based)
            switch try await decide(OutboxConflict(entry: id, local: local, server: server, isDelete: true)) {
            case .keepServer:
                dropped.insert(deleted)
                kept.append(server)
            case .send(let replacement):
                changes.deletedVersions[deleted] = replacement.version
            }
        }
        guard !resolved.isEmpty else {
            state.withLock { $0.writes.add(id, entry.changes) }
            try await refused(&entry, error, context: context)
            return false
        }
        changes.updated.removeAll { dropped.contains($0.id) }
        changes.deleted.removeAll { dropped.contains($0) }
        for id in dropped { changes.deletedVersions[id] = nil }
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
        let event = ChangeEvent(
            updated: Set(resolved.keys), invalidatedEntities: Set(resolved.keys.map(\.entity)), nodes: kept,
            source: name, outbox: OutboxOutcome(sent: dropped, resolved: resolved))
        // The caches above showed the held change in their windows, which the settlement may undo.
        await context.services.forgetInCaches(event, context: context)
        context.events.publish(event)
        return resend
    }

    /// What the conflict policy makes of one conflict: `server-wins` keeps the backend's object,
    /// `client-wins` sends the change unconditionally, `merge` sends it based on the backend's
    /// current version (a delete then deletes it as it is now), a named resolver decides.
    private func decide(_ conflict: OutboxConflict) async throws -> ConflictDecision {
        var local = conflict.local
        switch options.conflictPolicy {
        case .serverWins:
            return .keepServer
        case .clientWins:
            local.version = nil
            return .send(local)
        case .merge:
            guard let server = conflict.server else { return .keepServer }
            local.version = server.version
            return .send(local)
        case .named(let name):
            guard let resolver = resolvers[name] else { return .keepServer }
            return try await resolver(conflict)
        }
    }

    /// The backend's current object, read through the whole chain so the caches take it.
    private func current(_ id: ObjectID, context: RequestContext) async throws -> Node? {
        try await context.sendOnOwnAccount(.objectFault(id), cachePolicy: .reload).objectNode()
    }
}
