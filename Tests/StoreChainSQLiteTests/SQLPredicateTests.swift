import Foundation
@_spi(Internals) import StoreChain
import StoreChainTesting
import Testing

@testable import StoreChainSQLite

/// Predicates compiled to SQL select a superset of what the in-memory evaluator matches (the
/// exact set where everything compiles), and values never change the SQL.
@Suite struct SQLPredicateTests {
    let model = try! MusicFixture.model()

    /// A disk storage holding the fixture catalog.
    private func storage() async throws -> SQLiteCacheStorage {
        let path = TemporaryFolder.make("storechain").appending(path: "c.sqlite").path
        return try await SQLiteCacheStorage.holdingTheFixtureCatalog(at: path, model: model)
    }

    private func check(_ format: String, entity: String, in storage: SQLiteCacheStorage, exact: Bool) async throws {
        let bound = try CompiledPredicate(FetchPredicate(format: format), entity: entity, model: model)
        let fromSQL = try await storage.nodes(of: entity, matching: bound.predicate)
        let store = try MusicFixture.store()
        let expected = try store.fetch(FetchRequest(entity: entity, predicate: FetchPredicate(format: format)))
        guard case .objects(let matching) = expected else { throw Failure("expected objects") }
        let selected = Set(fromSQL.map(\.id))
        #expect(Set(matching.map(\.id)).isSubset(of: selected), "\(format): SQL dropped a match")
        if exact { #expect(selected == Set(matching.map(\.id)), "\(format): SQL filtered exactly") }
    }

    @Test func compilableComparisonsFilterExactly() async throws {
        let storage = try await storage()
        for format in [
            "year >= 2000", "year < 2000 OR price > 9", "price == nil", "price != nil", "year != 2010",
            "title BEGINSWITH 'Re'", "title CONTAINS 'a'", "id IN {10, 21, 99}", "year BETWEEN {1990, 2010}",
            "year >= 1990 AND title < 'S'", "FALSEPREDICATE",
        ] {
            try await check(format, entity: "Album", in: storage, exact: !format.contains("BETWEEN"))
        }
        // A to-one's key (`band.id`) is read from the stored relationship, in SQL.
        for format in ["band.id == 1", "band.id IN {2, 3, 99}", "band.id == 2 AND year >= 2000", "band.id IN {}"] {
            try await check(format, entity: "Album", in: storage, exact: true)
        }
        try await check("active == true", entity: "Band", in: storage, exact: true)
        try await check("founded < CAST('2000-01-01', 'NSDate')", entity: "Band", in: storage, exact: true)
        try await check("name == 'Sigur Rós'", entity: "Band", in: storage, exact: true)
    }

    @Test func whatCannotBeCompiledIsLeftToMemory() async throws {
        let storage = try await storage()
        for format in [
            "NOT (year >= 2000)", "title BEGINSWITH[c] 're'", "band.name == 'Rue Royale'", "title LIKE '*e*'",
            "year >= 2000 AND band.country == 'UK'", "title ENDSWITH 'd' OR year == 1999",
        ] {
            try await check(format, entity: "Album", in: storage, exact: false)
        }
    }

    @Test func generatedPredicatesNeverLoseAMatch() async throws {
        let storage = try await storage()
        var random = SplitMix64(seed: 99)
        func pick<T>(_ options: [T]) -> T { options[Int(random.next() % UInt64(options.count))] }
        for _ in 0..<300 {
            var format = ""
            for index in 0..<(1 + Int(random.next() % 3)) {
                if index > 0 { format += pick([" AND ", " OR "]) }
                let comparison = pick([
                    "year \(pick(["<", "<=", ">", ">=", "==", "!="])) \(1985 + Int(random.next() % 30))",
                    "price \(pick(["<", ">", "==", "!="])) \(pick(["7.5", "9.99", "10", "nil"]))",
                    "title \(pick(["BEGINSWITH", "CONTAINS", "==", "<"])) '\(pick(["R", "Ta", "Shout", "é", ""]))'",
                    "NOT (id IN {\(10 + Int(random.next() % 25)), 30})",
                    pick(["band.id == 1", "band.id == 2", "band.id IN {1, 3}", "band.id IN {}"]),
                ])
                format += comparison
            }
            if format.contains("price") && format.contains("nil") && (format.contains("<") || format.contains(">")) {
                continue  // `price < nil` is a type error, not a query
            }
            try await check(format, entity: "Album", in: storage, exact: false)
        }
    }

    @Test func hostileValuesAreOnlyValues() async throws {
        let storage = try await storage()
        for hostile in ["x'); DROP TABLE nodes; --", "' OR 1=1 --", "\"; DELETE FROM nodes; \"", "%_*?\\"] {
            let predicate = FetchPredicate.comparison(
                Comparison(.keyPath(["title"]), .equal, .constant(.string(hostile))))
            #expect(try await storage.nodes(of: "Album", matching: predicate).isEmpty)
        }
        #expect(try await storage.statistics().objectsByEntity["Album"] == 6, "nothing was dropped or deleted")
    }
}
