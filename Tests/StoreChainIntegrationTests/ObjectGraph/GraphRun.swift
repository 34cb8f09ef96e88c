import Foundation
import StoreChain
import Testing

/// A chain under test for the object-graph test, and the backend data it is checked against.
struct GraphSetup {
    var name: String
    var model: ObjectModel
    /// A new chain over the same backend and (where there is one) the same disk cache: a new
    /// run of the app.
    var makeChain: () throws -> Chain
    /// Everything the backend holds now.
    var backendNodes: () -> [Node]
    /// Whether a restart keeps something (a disk cache); without, a restart step does nothing.
    var restarts: Bool
    /// Whether queries may fetch an entity whole (no predicate, no window). Without, the caches
    /// never hold a complete collection, and every repeated query is answered from a cached
    /// window: the part of the caches a save must invalidate rather than update.
    var wholeFetches = true
    /// The network below the chain's outbox, for the offline and online steps; `nil`: no outbox.
    var network: GraphNetwork?
    /// How many saves the outbox holds.
    var pendingSaves: () -> Int = { 0 }
    /// Another process that changes the backend and tells the chain; `nil`: none.
    var elsewhere: GraphElsewhere?
    /// Whether the app may write (a backend without write routes: only the other process
    /// changes the data, and the contexts only read).
    var writes = true
    /// Saves a change as another client of the backend would, seen only through the backend's
    /// change feed: a restart step makes one while the app is stopped. `nil`: restarts change
    /// nothing.
    var changeWhileStopped: ((Node) throws -> Void)?
}

/// A read or a save that disagreed with the reference, with the step it happened at.
struct GraphMismatch: Error, CustomStringConvertible {
    var step: Int
    var message: String
    var description: String { "step \(step): \(message)" }
}

/// Runs operations against contexts over a chain and the reference side by side; the first
/// disagreement ends the run.
final class GraphRun {
    struct ContextUnderTest {
        var context: ObjectContext
        var changes = ReferenceChanges()
        /// The objects this context inserted and has not saved yet, by temporary ID.
        var inserted: [ObjectID: ManagedObject] = [:]
        /// The query this context observes, and how many results of it the test has checked.
        var observed: (query: GraphQuery, observation: GraphObservation, checked: Int)?
    }

    let setup: GraphSetup
    var chain: Chain
    var committed: ReferenceGraph
    var contexts: [ContextUnderTest]
    var inserts = 0
    /// Objects inserted by saves the outbox holds, by their temporary IDs (which the reference
    /// uses for them until they reach the backend).
    private var unsent: [ObjectID: ManagedObject] = [:]
    /// The attributes that saves the outbox holds set, by object: on replay they win over what
    /// another process changed meanwhile (the outbox's `merge` conflict policy).
    private var unsentAttributes: [ObjectID: Set<String>] = [:]
    /// The last three queries asked (their two random numbers), for `.refetch`.
    private var asked: [(first: UInt64, second: UInt64)] = []
    /// What each step did, for the report of a failing run.
    private(set) var log: [String] = []
    /// Fetches, counts and ID fetches made while the backend was down that were answered
    /// before while it was up: answered (and compared), and failed.
    private(set) var offlineReads = (answered: 0, failed: 0)
    /// The queries answered while the backend was up.
    private var answeredOnline: Set<String> = []

    init(setup: GraphSetup, contexts: Int) throws {
        self.setup = setup
        chain = try setup.makeChain()
        committed = ReferenceGraph(setup.backendNodes())
        let chain = self.chain
        self.contexts = (0..<contexts).map { _ in
            ContextUnderTest(context: ObjectContext(chain: chain, model: setup.model))
        }
    }

    func finish() async {
        for context in contexts { context.observed?.observation.stop() }
        await chain.shutdown()
    }

    /// Runs `operations` in order; throws the first mismatch.
    func run(_ operations: [GraphOperation]) async throws {
        for (step, planned) in operations.enumerated() {
            for operation in repeated(planned) {
                let query = readQuery(operation)
                let isDown = setup.network?.isDown == true
                // After a change elsewhere (no values) or a restart, what was read is no longer known.
                if [.changeElsewhere, .restart].contains(operation.kind) { answeredOnline.removeAll() }
                do {
                    try await perform(operation, step: step)
                    if let query {
                        if !isDown {
                            answeredOnline.insert(query)
                        } else if answeredOnline.contains(query) {
                            offlineReads.answered += 1
                        }
                    }
                } catch let mismatch as GraphMismatch {
                    throw mismatch
                } catch let error as StoreChainError
                    where setup.network?.isDown == true && operation.kind != .save
                    && (error.isTransient || error.code == .notCached)
                {
                    // With the backend down, a read the caches cannot answer fails; one they
                    // answer is compared as always.
                    log.append("\(step): \(operation) failed with the backend down: \(error.message)")
                    if let query, answeredOnline.contains(query) { offlineReads.failed += 1 }
                } catch {
                    var what = "\(operation)"
                    if [.fetch, .count, .objectIDs].contains(operation.kind),
                        let query = try? GraphQuery.make(operation.first, operation.second, whole: setup.wholeFetches)
                    {
                        what += " [\(query)]"
                    }
                    throw GraphMismatch(step: step, message: "\(what) failed: \(error)")
                }
            }
        }
    }

    /// What a fetch, count or ID fetch asks, to tell a read asked before from a new one.
    private func readQuery(_ operation: GraphOperation) -> String? {
        guard [.fetch, .count, .objectIDs].contains(operation.kind),
            let query = try? GraphQuery.make(operation.first, operation.second, whole: setup.wholeFetches)
        else { return nil }
        return "\(operation.kind) \(query)"
    }

    /// A `.refetch` as the fetches (or counts) of the last queries asked, oldest first (a new
    /// query before any); a `.changeAndRefetch` as an update of a band or album, a save and a
    /// `.refetch`; a `.restart` where another client changes data meanwhile as the restart and a
    /// `.refetch` at once (an app asks again as soon as it starts); any other step as it is.
    private func repeated(_ operation: GraphOperation) -> [GraphOperation] {
        if operation.kind == .restart, setup.restarts, setup.changeWhileStopped != nil {
            var refetch = operation
            refetch.kind = .refetch
            return [operation] + repeated(refetch)
        }
        if operation.kind == .changeAndRefetch {
            // `.update` picks the entity by `first % 3`: a band (0) or an album (1).
            var update = operation
            update.kind = .update
            update.first = operation.first / 6 * 3 + operation.first % 2
            var save = operation
            save.kind = .save
            var refetch = operation
            refetch.kind = .refetch
            return [update, save] + repeated(refetch)
        }
        guard operation.kind == .refetch else { return [operation] }
        let queries = asked.isEmpty ? [(first: operation.first, second: operation.second)] : asked
        return queries.map { query in
            GraphOperation(
                kind: operation.second % 3 == 0 ? .count : .fetch, context: operation.context, first: query.first,
                second: query.second)
        }
    }

    private func fail(_ step: Int, _ message: String) -> GraphMismatch {
        GraphMismatch(step: step, message: message)
    }

    /// The objects context `index` shows, in a stable order (new objects by when they were made).
    private func visible(_ index: Int, entity: String? = nil) -> [ObjectID] {
        let view = contexts[index].changes.applied(to: committed)
        // An object a pending save inserted is shown by reads, but the steps change only
        // objects with permanent IDs and their own context's new ones.
        return view.objects.keys.filter {
            (entity == nil || $0.entity == entity) && (unsent[$0] == nil)
        }.sorted { left, right in
            (contexts[index].inserted[left].map { "~\(label(of: $0))" } ?? left.description)
                < (contexts[index].inserted[right].map { "~\(label(of: $0))" } ?? right.description)
        }
    }

    private var labels: [ObjectIdentifier: Int] = [:]
    private func label(of object: ManagedObject) -> String {
        let number = String(labels[ObjectIdentifier(object)] ?? 0)
        return String(repeating: "0", count: max(0, 8 - number.count)) + number
    }

    private func pick(_ ids: [ObjectID], _ number: UInt64) -> ObjectID? {
        ids.isEmpty ? nil : ids[Int(number % UInt64(ids.count))]
    }

    private func object(_ id: ObjectID, in index: Int) -> ManagedObject {
        contexts[index].inserted[id] ?? contexts[index].context.object(with: id)
    }

    // MARK: Steps

    private func perform(_ operation: GraphOperation, step: Int) async throws {
        if !setup.writes, [.insert, .update, .relate, .delete, .save, .rollback].contains(operation.kind) { return }
        let index = operation.context
        let context = contexts[index].context
        var random = SplitMix64(seed: operation.second)
        switch operation.kind {
        case .insert:
            let entity = ["Band", "Album", "Track"][Int(operation.first % 3)]
            inserts += 1
            var values: [String: Value] = [:]
            var toOne: [String: ObjectID?] = [:]
            switch entity {
            case "Band":
                values = [
                    "name": .string("New band \(inserts)"), "country": GraphQuery.countries[Int(random.next() % 5)],
                ]
            case "Album":
                values = ["title": .string("New album \(inserts)"), "year": .integer(1960 + Int(random.next() % 65))]
            default:
                values = [
                    "title": .string("New track \(inserts)"), "number": .integer(Int(random.next() % 12)),
                    "seconds": .integer(60 + Int(random.next() % 500)),
                ]
            }
            let relationship = ReferenceGraph.toOne[entity]
            if let relationship {
                guard let target = pick(deletable(index, entity: relationship.destination), random.next()) else {
                    log.append("\(step): insert \(entity) skipped (no \(relationship.destination))")
                    return
                }
                toOne[relationship.name] = target
            }
            let inserted = try context.insert(entity, values: values)
            labels[ObjectIdentifier(inserted)] = inserts
            for case (let name, let target?) in toOne {
                try inserted.setRelated(object(target, in: index), for: name)
            }
            contexts[index].inserted[inserted.objectID] = inserted
            contexts[index].changes.inserted[inserted.objectID] = ReferenceGraph.Object(
                attributes: values, toOne: toOne)
            log.append("\(step): context \(index) inserts \(inserted.objectID) \(values) \(toOne)")

        case .update:
            // The entity first: picked among all objects, nearly every change was to a track, and
            // a cached query over `album.band.…` was almost never tested against a band's change.
            let entity = ["Band", "Album", "Track"][Int(operation.first % 3)]
            guard let id = pick(visible(index, entity: entity), operation.first / 3) else { return }
            let (name, value) = Self.attributeChange(of: id.entity, &random)
            try object(id, in: index).set(value, for: name)
            change(id, in: index) { $0.attributes[name] = value }
            log.append("\(step): context \(index) sets \(id).\(name) = \(value)")

        case .changeElsewhere:
            // Not to an object a context is changing: its save would meet a conflict, which the
            // app must settle. A save the outbox holds meets one on replay, which the outbox's
            // `merge` policy settles: its attributes win, the others keep the new values.
            guard let elsewhere = setup.elsewhere else { return }
            let busy = Set(contexts.flatMap(\.changes.mentioned))
            let entity = ["Band", "Album", "Track"][Int(operation.first % 3)]
            // Half the time, while saves are pending, an object one of them updates: a conflict.
            let conflicting = operation.second % 2 == 0 && !unsentAttributes.isEmpty
            let candidates = (conflicting ? Array(unsentAttributes.keys) : committed.ids(of: entity)).filter {
                !busy.contains($0) && !$0.isTemporary && committed.objects[$0] != nil
            }.sorted { $0.description < $1.description }
            guard let id = pick(candidates, operation.first / 3) else { return }
            var (name, value) = Self.attributeChange(of: id.entity, &random)
            // And then mostly an attribute it sets.
            for _ in 0..<3 where conflicting && unsentAttributes[id]?.contains(name) == false {
                (name, value) = Self.attributeChange(of: id.entity, &random)
            }
            // A third of the time the change carries the object's new state, as a feed's does.
            let record = operation.second % 3 == 0
            try await elsewhere.save(Node(id: id, attributes: [name: value]), record: record, telling: chain)
            let overridden = unsentAttributes[id]?.contains(name) == true
            if !overridden { committed.objects[id]?.attributes[name] = value }
            log.append(
                "\(step): another process sets \(id).\(name) = \(value) and tells the chain\(record ? " with its record" : "")\(overridden ? " (a pending save sets it too)" : "")"
            )
            for context in contexts { await context.context.mergePublishedChanges() }
            if setup.pendingSaves() == 0 { try checkBackend(step: step) }
            for observing in contexts.indices { try await checkObservation(of: observing, step: step) }

        case .relate:
            let movable = visible(index).filter { ReferenceGraph.toOne[$0.entity] != nil }
            guard let id = pick(movable, operation.first), let relationship = ReferenceGraph.toOne[id.entity],
                let target = pick(deletable(index, entity: relationship.destination), random.next())
            else { return }
            try object(id, in: index).setRelated(object(target, in: index), for: relationship.name)
            change(id, in: index) { $0.toOne[relationship.name] = target }
            log.append("\(step): context \(index) sets \(id).\(relationship.name) = \(target)")

        case .delete:
            // Saved objects only, and none that a change of this context points at: a new object
            // is forgotten, not deleted, and a change pointing at a deleted object is refused.
            let pointedAt = Set(
                (Array(contexts[index].changes.inserted.values) + Array(contexts[index].changes.updated.values))
                    .flatMap { $0.toOne.values.compactMap { $0 } })
            // Nor a band with albums: they require it (nullify would leave them invalid, which
            // a context refuses only when it knows the albums).
            let view = contexts[index].changes.applied(to: committed)
            let candidates = visible(index).filter {
                !$0.isTemporary && !pointedAt.contains($0) && ($0.entity != "Band" || view.members(of: $0).isEmpty)
            }
            guard let id = pick(candidates, operation.first) else { return }
            context.delete(object(id, in: index))
            contexts[index].changes.deleted.insert(id)
            log.append("\(step): context \(index) deletes \(id)")

        case .save:
            try await save(index, step: step)

        case .rollback:
            rollback(index)
            log.append("\(step): context \(index) rolls back")

        case .fetch, .objectIDs, .count, .refetch, .changeAndRefetch:
            let query = try GraphQuery.make(operation.first, operation.second, whole: setup.wholeFetches)
            asked = Array((asked + [(operation.first, operation.second)]).suffix(3))
            await context.mergePublishedChanges()
            let expected = query.answer(over: committed)
            switch operation.kind {
            case .count:
                var request = query.request
                request.fetchLimit = nil
                request.fetchOffset = 0
                let count = try await context.count(for: request)
                let all = GraphQuery(request: request, matches: query.matches, sortKeys: query.sortKeys)
                let expectedCount = all.answer(over: committed).count
                log.append("\(step): context \(index) counts \(request) = \(count)")
                if count != expectedCount {
                    throw fail(step, "count \(request) = \(count), reference \(expectedCount)")
                }
            case .objectIDs:
                let ids = try await context.objectIDs(for: query.request)
                log.append("\(step): context \(index) fetches IDs \(query)")
                if ids != expected { throw fail(step, "IDs \(query): \(ids), reference \(expected)") }
            default:
                let objects = try await context.fetch(query.request)
                log.append("\(step): context \(index) fetches \(query)")
                if objects.map(\.objectID) != expected {
                    throw fail(step, "fetch \(query): \(objects.map(\.objectID)), reference \(expected)")
                }
                let view = contexts[index].changes.applied(to: committed)
                for object in objects.prefix(5) {
                    try await compareValues(of: object, with: view, step: step)
                }
            }

        case .readValues:
            guard let id = pick(visible(index), operation.first) else { return }
            await context.mergePublishedChanges()
            log.append("\(step): context \(index) reads \(id)")
            try await compareValues(
                of: object(id, in: index), with: contexts[index].changes.applied(to: committed), step: step)

        case .readRelationship:
            guard let id = pick(visible(index), operation.first) else { return }
            await context.mergePublishedChanges()
            let view = contexts[index].changes.applied(to: committed)
            let object = object(id, in: index)
            if let relationship = ReferenceGraph.toOne[id.entity] {
                let found = try await object.related(relationship.name)?.objectID
                log.append(
                    "\(step): context \(index) reads \(id).\(relationship.name) = \(found?.description ?? "nil")")
                if found != view.target(of: id) {
                    throw fail(
                        step,
                        "\(id).\(relationship.name) = \(found?.description ?? "nil"), reference \(view.target(of: id)?.description ?? "nil")"
                    )
                }
            }
            if let relationship = ReferenceGraph.toMany[id.entity] {
                let found = Set(try await object.relatedObjects(relationship.name).map(\.objectID))
                log.append("\(step): context \(index) reads \(id).\(relationship.name) (\(found.count))")
                let expected = view.members(of: id)
                if found != expected {
                    throw fail(
                        step,
                        "\(id).\(relationship.name): extra \(found.subtracting(expected).sorted { $0.description < $1.description }), missing \(expected.subtracting(found).sorted { $0.description < $1.description })"
                    )
                }
            }

        case .observe:
            let query = try GraphQuery.make(operation.first, operation.second, whole: setup.wholeFetches)
            contexts[index].observed?.observation.stop()
            await context.mergePublishedChanges()
            contexts[index].observed = (query, GraphObservation(query.request, in: context), 0)
            log.append("\(step): context \(index) observes \(query)")
            try await checkObservation(of: index, step: step)

        case .goOffline:
            guard let network = setup.network, !network.isDown else { return }
            network.isDown = true
            log.append("\(step): the backend goes down")

        case .goOnline:
            guard let network = setup.network, network.isDown else { return }
            network.isDown = false
            let left = try await chain.sync()
            log.append("\(step): the backend comes back; the outbox sent its saves (\(left) left)")
            if left != 0 { throw fail(step, "\(left) saves still pending after a sync with the backend up") }
            try await settleUnsent(step: step)

        case .restart:
            guard setup.restarts else { return }
            for context in contexts { context.observed?.observation.stop() }
            await chain.shutdown()
            var meanwhile = ""
            // An object the last query shows (the restart asks it again at once), or any.
            let entity = ["Band", "Album", "Track"][Int(operation.first % 3)]
            let shown = try asked.last.map {
                try GraphQuery.make($0.first, $0.second, whole: setup.wholeFetches).answer(over: committed).prefix(5)
            }
            let candidates = (shown.map(Array.init) ?? committed.ids(of: entity)).filter { !$0.isTemporary }.sorted {
                $0.description < $1.description
            }
            if let changeWhileStopped = setup.changeWhileStopped, let id = pick(candidates, operation.first / 3) {
                let (name, value) = Self.attributeChange(of: id.entity, &random)
                try changeWhileStopped(Node(id: id, attributes: [name: value]))
                committed.objects[id]?.attributes[name] = value
                meanwhile = "; while it was stopped another client set \(id).\(name) = \(value)"
            }
            chain = try setup.makeChain()
            let chain = self.chain
            contexts = contexts.map { _ in ContextUnderTest(context: ObjectContext(chain: chain, model: setup.model)) }
            log.append("\(step): restart (a new chain over the same caches; unsaved changes are gone)\(meanwhile)")
        }
    }

    /// A random attribute of an object of `entity` and a new value for it.
    private static func attributeChange(of entity: String, _ random: inout SplitMix64) -> (String, Value) {
        switch entity {
        case "Band":
            random.next() % 2 == 0
                ? ("name", .string("Renamed \(random.next() % 1000)"))
                : ("country", GraphQuery.countries[Int(random.next() % 5)])
        case "Album":
            random.next() % 2 == 0
                ? ("title", .string("Retitled \(random.next() % 1000)"))
                : ("year", .integer(1960 + Int(random.next() % 65)))
        default:
            random.next() % 2 == 0
                ? ("seconds", .integer(60 + Int(random.next() % 500)))
                : ("number", .integer(Int(random.next() % 12)))
        }
    }

    /// Objects of `entity` that context `index` may point a relationship at: visible and not
    /// deleted there.
    private func deletable(_ index: Int, entity: String) -> [ObjectID] {
        visible(index, entity: entity)
    }

    private func change(_ id: ObjectID, in index: Int, _ body: (inout ReferenceGraph.Object) -> Void) {
        if var object = contexts[index].changes.inserted[id] {
            body(&object)
            contexts[index].changes.inserted[id] = object
        } else {
            body(&contexts[index].changes.updated[id, default: ReferenceGraph.Object(attributes: [:])])
        }
    }

    private func rollback(_ index: Int) {
        contexts[index].context.rollback()
        contexts[index].changes = ReferenceChanges()
        contexts[index].inserted = [:]
    }

    private func compareValues(of object: ManagedObject, with view: ReferenceGraph, step: Int) async throws {
        let id = object.objectID
        guard let expected = view.objects[id] else { return }
        for attribute in try setup.model.requireEntity(id.entity).attributes
        where attribute.name != "id" || !id.isTemporary {
            let found = try await object.value(attribute.name)
            let want = expected.attributes[attribute.name] ?? .null
            if found != want {
                throw fail(step, "\(id).\(attribute.name) = \(found), reference \(want)")
            }
        }
    }

    private func save(_ index: Int, step: Int) async throws {
        let changes = contexts[index].changes
        // A change that names an object another context deleted meanwhile cannot be saved: the
        // test takes it back instead of predicting each backend's refusal.
        let gone = changes.mentioned.filter { !$0.isTemporary && committed.objects[$0] == nil }
        guard gone.isEmpty else {
            rollback(index)
            log.append("\(step): context \(index) rolls back (its changes name \(gone.count) deleted objects)")
            return
        }
        // Nor can a band's deletion once another context's save gave the band albums, which
        // require it: a context that knows them refuses, one that does not yet sends it.
        var keeping = changes
        keeping.deleted = []
        let kept = keeping.applied(to: committed)
        let orphaned = changes.deleted.filter { $0.entity == "Band" && !kept.members(of: $0).isEmpty }
        guard orphaned.isEmpty else {
            rollback(index)
            log.append("\(step): context \(index) rolls back (it deletes \(orphaned.count) bands that now have albums)")
            return
        }
        let inserted = contexts[index].inserted
        let result: SaveResult
        do {
            result = try await contexts[index].context.save()
        } catch let error as StoreChainError where setup.network?.isDown == true && error.isTransient {
            // Cascading a deletion loads what it takes with it; with the backend down that can
            // fail, and the context keeps its changes.
            log.append("\(step): context \(index) cannot save with the backend down: \(error.message)")
            return
        }
        var permanent: [ObjectID: ObjectID] = [:]
        if !result.pending.isEmpty {
            if setup.network?.isDown != true { throw fail(step, "a save is pending with the backend up") }
            for (temporary, object) in inserted { unsent[temporary] = object }
            for (id, change) in changes.updated { unsentAttributes[id, default: []].formUnion(change.attributes.keys) }
        } else {
            for (temporary, object) in inserted {
                if object.objectID.isTemporary {
                    throw fail(step, "\(temporary) still has a temporary ID after a save")
                }
                permanent[temporary] = object.objectID
            }
        }
        var next = changes.applied(to: committed)
        var remapped = ReferenceGraph([])
        for (id, var object) in next.objects {
            let newID = permanent[id] ?? id
            if permanent[id] != nil, let key = newID.key { object.attributes["id"] = key }
            object.toOne = object.toOne.mapValues { $0.map { permanent[$0] ?? $0 } }
            remapped.objects[newID] = object
        }
        next = remapped
        let deleted = Set(committed.objects.keys).subtracting(next.objects.keys)
        committed = next
        contexts[index].changes = ReferenceChanges()
        contexts[index].inserted = [:]
        log.append(
            "\(step): context \(index) saves (\(permanent.count) inserted as \(permanent.values.map(\.description).sorted()), \(deleted.count) deleted\(result.pending.isEmpty ? "" : ", pending"))"
        )
        // Other contexts' changes that name a deleted object are taken back.
        for other in contexts.indices where other != index {
            if !contexts[other].changes.mentioned.isDisjoint(with: deleted) {
                rollback(other)
                log.append("\(step): context \(other) rolls back (its changes name an object just deleted)")
            }
        }
        if setup.pendingSaves() == 0 { try checkBackend(step: step) }
        for observing in contexts.indices { try await checkObservation(of: observing, step: step) }
    }

    /// After the outbox sent what it held: the objects inserted meanwhile have permanent IDs,
    /// which the reference takes (in its objects, relationships and every context's changes),
    /// and the backend holds the reference.
    private func settleUnsent(step: Int) async throws {
        for context in contexts { await context.context.mergePublishedChanges() }
        var permanent: [ObjectID: ObjectID] = [:]
        // An object a later pending save deleted (a cascade from its album) was never sent.
        for (temporary, object) in unsent where committed.objects[temporary] != nil {
            if object.objectID.isTemporary {
                throw fail(step, "\(temporary) still has a temporary ID after the outbox sent it")
            }
            permanent[temporary] = object.objectID
        }
        unsent = [:]
        unsentAttributes = [:]
        func remap(_ object: ReferenceGraph.Object) -> ReferenceGraph.Object {
            var object = object
            object.toOne = object.toOne.mapValues { $0.map { permanent[$0] ?? $0 } }
            return object
        }
        var remapped = ReferenceGraph([])
        for (id, object) in committed.objects {
            var object = remap(object)
            if let newID = permanent[id], let key = newID.key { object.attributes["id"] = key }
            remapped.objects[permanent[id] ?? id] = object
        }
        committed = remapped
        for index in contexts.indices {
            contexts[index].changes.inserted = contexts[index].changes.inserted.mapValues(remap)
            contexts[index].changes.updated = Dictionary(
                contexts[index].changes.updated.map { (permanent[$0.key] ?? $0.key, remap($0.value)) },
                uniquingKeysWith: { _, last in last })
        }
        log.append("\(step): \(permanent.count) objects inserted offline have permanent IDs")
        try checkBackend(step: step)
        for observing in contexts.indices { try await checkObservation(of: observing, step: step) }
    }

    /// What context `index`'s observation delivered since the last check comes to the
    /// reference's answer. Results on the way are logged, not judged: an observation delivers
    /// when its objects' values change too, and a check that found the IDs already right does
    /// not wait for that delivery, so it arrives on the way to the next save's result.
    private func checkObservation(of index: Int, step: Int) async throws {
        guard let (query, observation, checked) = contexts[index].observed else { return }
        // While the backend is down an observation keeps its last result when its refetch
        // fails; it is held to the reference again once the backend is back.
        if setup.network?.isDown == true, checked > 0 { return }
        let expected = query.answer(over: committed)
        let (results, error) = await observation.waitFor(expected, after: checked)
        contexts[index].observed?.checked = checked + results.count
        log.append("\(step): context \(index)'s observation delivered \(results)")
        if let error, setup.network?.isDown == true, results.isEmpty, checked == 0,
            error.contains("the object-graph test took the backend down")
        {
            // Its first fetch failed with the backend down: it ended, as it should, and goes.
            contexts[index].observed = nil
            log.append("\(step): context \(index)'s observation could not start with the backend down")
            return
        }
        if let error {
            throw fail(
                step,
                "observation of \(query) in context \(index): \(error); delivered \(results), reference \(expected)"
                    + (await whatTheChainAnswers(query, in: index)))
        }
    }

    /// What a fetch of `query` answers now in the observing context, with the caches and without:
    /// which layer holds a wrong answer, for the report.
    private func whatTheChainAnswers(_ query: GraphQuery, in index: Int) async -> String {
        func answer(_ policy: CachePolicy, context: ObjectContext) async -> String {
            var request = query.request
            request.cachePolicy = policy
            do {
                return "\(try await context.fetch(request).map(\.objectID))"
            } catch {
                return "\(error)"
            }
        }
        let fresh = ObjectContext(chain: chain, model: setup.model)
        return """
            ; a fetch now answers \(await answer(.useCache, context: contexts[index].context)) \
            (a new context: \(await answer(.useCache, context: fresh)), reloaded: \(await answer(.reload, context: fresh)))
            """
    }

    /// The backend holds exactly the reference's objects, values and to-ones.
    private func checkBackend(step: Int) throws {
        let backend = ReferenceGraph(setup.backendNodes())
        let ids = Set(backend.objects.keys)
        let expected = Set(committed.objects.keys)
        if ids != expected {
            throw fail(
                step,
                "backend holds extra \(ids.subtracting(expected).sorted { $0.description < $1.description }), lacks \(expected.subtracting(ids).sorted { $0.description < $1.description })"
            )
        }
        for (id, object) in committed.objects {
            guard let held = backend.objects[id] else { continue }
            for (name, value) in object.attributes where (held.attributes[name] ?? .null) != value {
                throw fail(step, "backend \(id).\(name) = \(held.attributes[name] ?? .null), reference \(value)")
            }
            for (name, target) in object.toOne where held.toOne[name] ?? nil != target {
                throw fail(
                    step,
                    "backend \(id).\(name) = \(String(describing: held.toOne[name] ?? nil)), reference \(String(describing: target))"
                )
            }
        }
    }
}
