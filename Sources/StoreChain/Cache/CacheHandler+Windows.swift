extension CacheHandler {
    /// At most this many cached objects are read to edit the windows one save changes; past
    /// it, the windows are dropped (read again when asked for), as they always may be.
    static var windowEditBudget: Int { 10_000 }

    /// The cached windows and counts reading `entities` as the save `effect` describes leaves
    /// them, where that can be decided from the cached objects (`WindowEdit`); the others are
    /// dropped with the write's `invalidated`. Kept this way, a read after a save (sent, or held
    /// by an outbox) is answered from the cache, online and offline alike, and shows the save.
    func windowsEdited(by effect: SaveEffect, reading entities: Set<String>, context: RequestContext) async
        -> [CachedQuery]
    {
        guard !entities.isEmpty,
            let windows = await perform("read", context: context, { try await storage.queries(reading: entities) }),
            !windows.isEmpty
        else { return [] }
        var edits: [(edit: WindowEdit, query: CachedQuery)] = []
        for query in windows {
            var whole = query.request
            whole.fetchOffset = 0
            whole.fetchLimit = nil
            guard let plan = try? FetchPlan.planned(whole, model: model) else { continue }
            let edit = WindowEdit(query: query, plan: plan, model: model)
            edits.append((edit, query))
        }
        guard let source = await objectsRead(by: edits.map(\.edit), effect: effect, context: context) else { return [] }
        return edits.compactMap { edit, _ in
            guard let edited = edit.applying(effect, source: source) else { return nil }
            // A storage that keeps no temporary IDs drops a window an insert the outbox holds joins.
            guard storage.keepsTemporaryObjects || !edited.ids.contains(where: \.isTemporary) else { return nil }
            return edited
        }
    }

    /// The objects editing the windows reads, in their state after the save: the windows'
    /// members and the objects their predicates and orders reach from them and from the changed
    /// objects. `nil` past `windowEditBudget`.
    private func objectsRead(by edits: [WindowEdit], effect: SaveEffect, context: RequestContext) async
        -> [ObjectID: Node]?
    {
        var known = effect.after
        let removed = effect.removed
        func load(_ ids: some Sequence<ObjectID>) async -> Bool {
            let missing = Array(Set(ids.lazy.filter { known[$0] == nil && !removed.contains($0) }))
            guard !missing.isEmpty else { return true }
            guard known.count + missing.count <= Self.windowEditBudget else { return false }
            let found = await perform("read", context: context) { try await storage.nodes(missing) } ?? [:]
            known.merge(found) { after, _ in after }
            return true
        }
        guard await load(edits.flatMap(\.query.ids)) else { return nil }
        let starts = Array(known.values) + Array(effect.before.values)
        for path in Set(edits.flatMap(\.plan.readPaths)) {
            var level = starts
            for name in path {
                let ids = level.flatMap { $0.relationships[name]?.objectIDs ?? [] }
                guard await load(ids) else { return nil }
                level = ids.compactMap { known[$0] }
            }
        }
        return known
    }
}
