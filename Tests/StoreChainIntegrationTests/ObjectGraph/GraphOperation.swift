import Foundation
import StoreChain

/// One step of the object-graph test. Objects and values are chosen by raw random numbers taken
/// modulo what exists when the step runs, so any subsequence of steps can be run again (which
/// is how a failing sequence is shortened).
struct GraphOperation: CustomStringConvertible {
    enum Kind: CaseIterable {
        case insert, update, relate, delete, save, rollback, fetch, count, objectIDs, readValues, readRelationship,
            restart
        /// Asks the last three queries again (as fetches or as counts): what the caches kept of
        /// their first answers must still be right after the saves since.
        case refetch
        /// Changes one band or album, saves, and asks the last three queries again: a cached
        /// answer that reads it through a key path (`Track where album.band.name …`) must not
        /// outlive the change.
        case changeAndRefetch
        /// Observes a query (`ObjectContext.observe`) in place of the context's last one: after
        /// every save, what it delivers must come to the reference's answer.
        case observe
        /// Takes the backend down (a setup with an outbox; elsewhere nothing): saves are
        /// pending, reads are answered by the caches or fail.
        case goOffline
        /// Brings it back and sends what the outbox holds (`sync`): the backend must then hold
        /// the reference, with the permanent IDs of the objects inserted meanwhile.
        case goOnline
        /// Another process changes an attribute on the backend and tells the chain (as a shared
        /// cache's notice does: IDs, no values): every read after must show the new value.
        case changeElsewhere

        /// Whether the step only reads (a fetch, a count, IDs, values, a relationship, a refetch).
        var isRead: Bool { [.fetch, .count, .objectIDs, .readValues, .readRelationship, .refetch].contains(self) }
    }

    var kind: Kind
    var context: Int
    var first: UInt64
    var second: UInt64

    var description: String { "\(kind) in context \(context) (\(first), \(second))" }

    /// Reads are about half the steps, changes a third, saves one in nine.
    /// `observes`: whether to take `.observe` steps (see `ObjectGraphTests.observes`).
    static func random(_ random: inout SplitMix64, contexts: Int, observes: Bool) -> GraphOperation {
        var weights: [(Kind, Int)] = [
            (.insert, 8), (.update, 8), (.relate, 6), (.delete, 6), (.save, 12), (.rollback, 1), (.fetch, 16),
            (.count, 8), (.objectIDs, 6), (.readValues, 10), (.readRelationship, 14), (.restart, 2),
            (.refetch, 10), (.changeAndRefetch, 6), (.observe, 3), (.goOffline, 2),
            (.goOnline, 3), (.changeElsewhere, 4),
        ]
        if !observes { weights.removeAll { $0.0 == .observe } }
        var roll = Int(random.next() % UInt64(weights.reduce(0) { $0 + $1.1 }))
        var kind = Kind.fetch
        for (candidate, weight) in weights {
            if roll < weight {
                kind = candidate
                break
            }
            roll -= weight
        }
        return GraphOperation(
            kind: kind, context: Int(random.next() % UInt64(contexts)), first: random.next(), second: random.next())
    }
}

/// A fetch the test asks: a predicate with a plain reference of what it matches, a sort and a
/// window.
struct GraphQuery: CustomStringConvertible {
    var request: FetchRequest
    var matches: (ReferenceGraph, ObjectID) -> Bool
    var sortKeys: [(keyPath: String, ascending: Bool)]

    var description: String { request.description }

    static let countries: [Value] = ["UK", "US", "IS", "DE", "SE"]

    /// A query over `entity` from two random numbers; one in five has no predicate unless
    /// `whole` is false.
    static func make(_ first: UInt64, _ second: UInt64, whole: Bool = true) throws -> GraphQuery {
        var random = SplitMix64(seed: first)
        let entities = ["Band", "Album", "Track"]
        let entity = entities[Int(random.next() % 3)]
        func pick<T>(_ values: [T]) -> T { values[Int(random.next() % UInt64(values.count))] }
        let country = pick(countries)
        let letter = Value.string(String(pick(Array("ABCDEFGHKLMNPRST"))))
        let number = Int(random.next() % 12)
        typealias Template = (String, Value?, (ReferenceGraph, ObjectID) -> Bool)
        func equals(_ keyPath: String, _ value: Value) -> (ReferenceGraph, ObjectID) -> Bool {
            { graph, id in graph.value(keyPath, of: id) == value }
        }
        func compare(_ keyPath: String, _ value: Int, _ test: @escaping (Int, Int) -> Bool) -> (
            ReferenceGraph, ObjectID
        ) -> Bool {
            { graph, id in
                if case .integer(let found) = graph.value(keyPath, of: id) { test(found, value) } else { false }
            }
        }
        func begins(_ keyPath: String, _ prefix: Value) -> (ReferenceGraph, ObjectID) -> Bool {
            { graph, id in
                guard case .string(let text) = graph.value(keyPath, of: id), case .string(let start) = prefix else {
                    return false
                }
                return Array(text.unicodeScalars).starts(with: Array(start.unicodeScalars))
            }
        }
        let year = 1960 + Int(random.next() % 65)
        let seconds = 60 + Int(random.next() % 500)
        let templates: [String: [Template]] = [
            "Band": [
                ("country == %@", country, equals("country", country)),
                ("name BEGINSWITH %@", letter, begins("name", letter)),
                ("albums.@count >= %@", .integer(number % 9), compare("albums.@count", number % 9, >=)),
            ],
            "Album": [
                ("band.country == %@", country, equals("band.country", country)),
                ("year > %@", .integer(year), compare("year", year, >)),
                ("tracks.@count < %@", .integer(number), compare("tracks.@count", number, <)),
                ("band.name BEGINSWITH %@", letter, begins("band.name", letter)),
            ],
            "Track": [
                ("album.band.country == %@", country, equals("album.band.country", country)),
                ("seconds > %@", .integer(seconds), compare("seconds", seconds, >)),
                ("album.year <= %@", .integer(year), compare("album.year", year, <=)),
                ("number == %@", .integer(number), compare("number", number, ==)),
            ],
        ]
        var request = FetchRequest(entity: entity)
        var matches: (ReferenceGraph, ObjectID) -> Bool = { _, _ in true }
        if random.next() % 5 != 0 || !whole, let (format, argument, test) = templates[entity].map(pick) {
            request.predicate = try argument.map { try FetchPredicate(format, $0) } ?? FetchPredicate(format)
            matches = test
        }
        var sortRandom = SplitMix64(seed: second)
        let sortable = [
            "Band": ["name", "country"], "Album": ["year", "title"], "Track": ["seconds", "number", "title"],
        ]
        var sortKeys: [(String, Bool)] = []
        if sortRandom.next() % 3 != 0, let names = sortable[entity] {
            let name = names[Int(sortRandom.next() % UInt64(names.count))]
            sortKeys.append((name, sortRandom.next() % 2 == 0))
        }
        sortKeys.append(("id", true))
        request.sortDescriptors = sortKeys.map { FetchSortDescriptor($0.0, ascending: $0.1) }
        if sortRandom.next() % 2 == 0 {
            request.fetchLimit = 1 + Int(sortRandom.next() % 12)
            request.fetchOffset = Int(sortRandom.next() % 3) * Int(sortRandom.next() % 6)
        }
        return GraphQuery(request: request, matches: matches, sortKeys: sortKeys)
    }

    /// What the query returns over `graph`: matching IDs in sort order, windowed.
    func answer(over graph: ReferenceGraph) -> [ObjectID] {
        let matching = graph.ids(of: request.entity).filter { matches(graph, $0) }
        let sorted = matching.sorted { left, right in
            for (keyPath, ascending) in sortKeys {
                let order = Self.order(graph.value(keyPath, of: left), graph.value(keyPath, of: right))
                if order != 0 { return ascending ? order < 0 : order > 0 }
            }
            return false
        }
        let start = min(request.fetchOffset, sorted.count)
        let end = request.fetchLimit.map { min(sorted.count, start + $0) } ?? sorted.count
        return Array(sorted[start..<end])
    }

    /// `nil` first, numbers by value, strings by Unicode scalar.
    static func order(_ left: Value, _ right: Value) -> Int {
        switch (left, right) {
        case (.null, .null): return 0
        case (.null, _): return -1
        case (_, .null): return 1
        case (.integer(let a), .integer(let b)): return a < b ? -1 : (a == b ? 0 : 1)
        case (.string(let a), .string(let b)):
            let x = a.unicodeScalars.map(\.value)
            let y = b.unicodeScalars.map(\.value)
            return x == y ? 0 : (x.lexicographicallyPrecedes(y) ? -1 : 1)
        default: return 0
        }
    }
}
