import Foundation
import StoreChain
import Testing

@Suite struct InMemoryStoreTests {
    let store: InMemoryStore

    init() throws {
        store = try Fixtures.store()
    }

    @Test func sortsNilFirstAscendingAndLastDescending() throws {
        #expect(
            try Fixtures.keys(store, "Album", nil, sort: [FetchSortDescriptor("price")]) == [11, 31, 30, 10, 21, 20])
        #expect(
            try Fixtures.keys(store, "Album", nil, sort: [FetchSortDescriptor("price", ascending: false)])
                == [20, 21, 10, 30, 31, 11])
    }

    @Test func sortsByUnicodeScalarOrCaseInsensitively() throws {
        // "low" sorts after the capitalised names by code point, among them with [c].
        #expect(try Fixtures.keys(store, "Band", nil, sort: [FetchSortDescriptor("name")]) == [3, 1, 2, 4])
        #expect(
            try Fixtures.keys(store, "Band", nil, sort: [FetchSortDescriptor("name", caseInsensitive: true)]) == [
                4, 3, 1, 2,
            ])
    }

    @Test func sortsStringsByTheirUTF8BytesWhateverTheirStorage() throws {
        let model = try ObjectModel([
            EntityDescription(
                "Word", key: "id",
                attributes: [AttributeDescription("id", .integer), AttributeDescription("text", .string)])
        ])
        let texts = [
            "", "a", "a", "ab", "abc", "b", "B", "Z", "\u{7F}", "\u{80}", "é", "e\u{301}", "😀", "ﬀ",
            "long shared prefix, native 1",
            "long shared prefix, native 2", "long shared prefix, native", String(repeating: "z", count: 40),
            NSString(string: "a bridged string of some length") as String,
            String("--a substring made native".dropFirst(2)),
        ]
        let nodes = texts.enumerated().map { index, text in
            Node(
                id: ObjectID(entity: "Word", key: .integer(index)),
                attributes: ["id": .integer(index), "text": .string(text)])
        }
        let store = InMemoryStore(model: model, nodes: nodes)
        for ascending in [true, false] {
            let request = FetchRequest(
                entity: "Word", sortDescriptors: [FetchSortDescriptor("text", ascending: ascending)])
            guard case .objects(let sorted) = try store.fetch(request) else {
                Issue.record("a fetch of objects answered with something else")
                return
            }
            // The oracle: byte-wise order of the UTF-8, ties by key ascending.
            let expected = texts.indices.sorted { left, right in
                let (a, b) = (Array(texts[left].utf8), Array(texts[right].utf8))
                if a == b { return left < right }
                return ascending ? a.lexicographicallyPrecedes(b) : b.lexicographicallyPrecedes(a)
            }
            #expect(sorted.map { $0.id.key } == expected.map { .integer($0) }, "ascending: \(ascending)")
        }
    }

    /// A filtered, sorted fetch of many objects in shuffled order, with ties and missing values,
    /// against an order worked out independently.
    @Test func sortsManyShuffledObjectsLikeAnIndependentSort() throws {
        let model = try ObjectModel([
            EntityDescription(
                "Word", key: "id",
                attributes: [
                    AttributeDescription("id", .integer), AttributeDescription("rank", .integer, optional: true),
                ])
        ])
        var random = SplitMix64(seed: 45)
        let ranks: [Int?] = (0..<1_000).map { _ in
            Int.random(in: 0..<6, using: &random) == 0 ? nil : .random(in: 0..<40, using: &random)
        }
        let nodes = ranks.indices.shuffled(using: &random).map { index in
            var attributes: AttributeValues = ["id": .integer(index)]
            if let rank = ranks[index] { attributes["rank"] = .integer(rank) }
            return Node(id: ObjectID(entity: "Word", key: .integer(index)), attributes: attributes)
        }
        let store = InMemoryStore(model: model, nodes: nodes)
        for (ascending, offset, limit) in [(true, 0, nil), (false, 0, nil), (true, 17, 300), (false, 900, 50)] {
            let request = FetchRequest(
                entity: "Word", predicate: try FetchPredicate("id < 500 OR rank == nil OR rank >= 20"),
                sortDescriptors: [FetchSortDescriptor("rank", ascending: ascending)], fetchLimit: limit,
                fetchOffset: offset)
            guard case .objects(let sorted) = try store.fetch(request) else {
                Issue.record("a fetch of objects answered with something else")
                return
            }
            // The oracle: nil before any rank ascending (after descending), ties by key ascending.
            let matching = ranks.indices.filter { $0 < 500 || (ranks[$0] ?? 20) >= 20 }
            let ordered = matching.sorted { left, right in
                let (a, b) = (ranks[left] ?? -1, ranks[right] ?? -1)
                if a == b { return left < right }
                return ascending ? a < b : a > b
            }
            let window = ordered.dropFirst(offset).prefix(limit ?? ordered.count)
            #expect(
                sorted.map { $0.id.key } == window.map { .integer($0) },
                "ascending \(ascending), \(offset)+\(limit ?? 0)")
        }
    }

    @Test func sortsByToOneKeyPathThenNextDescriptorThenKey() throws {
        let sort = [FetchSortDescriptor("band.name", ascending: false), FetchSortDescriptor("year", ascending: false)]
        #expect(try Fixtures.keys(store, "Album", nil, sort: sort) == [21, 20, 11, 10, 30, 31])
        // Ties on every descriptor fall back to the key, so the order is always determined.
        #expect(
            try Fixtures.keys(store, "Track", nil, sort: [FetchSortDescriptor("album.band.country")]) == [
                300, 200, 201, 210, 100, 101, 110,
            ])
    }

    @Test func appliesOffsetAndLimitAfterFilterAndSort() throws {
        let sort = [FetchSortDescriptor("year")]
        #expect(try Fixtures.keys(store, "Album", nil, sort: sort, limit: 2) == [31, 30])
        #expect(try Fixtures.keys(store, "Album", nil, sort: sort, limit: 2, offset: 2) == [20, 21])
        #expect(try Fixtures.keys(store, "Album", nil, sort: sort, offset: 5) == [11])
        #expect(try Fixtures.keys(store, "Album", nil, sort: sort, offset: 99).isEmpty)
        // A limit of 0 is no limit, as in Core Data.
        #expect(try Fixtures.keys(store, "Album", nil, sort: sort, limit: 0) == [31, 30, 20, 21, 10, 11])
        var request = FetchRequest(entity: "Album", fetchLimit: 3)
        request.fetchLimit = 0
        #expect(request.fetchLimit == nil && request == FetchRequest(entity: "Album"))
        let predicate = try FetchPredicate("price != nil")
        #expect(try Fixtures.keys(store, "Album", predicate, sort: sort, limit: 2, offset: 1) == [30, 20])
    }

    @Test func countsTheWindow() throws {
        let request = FetchRequest(entity: "Album", predicate: try FetchPredicate("year > 2000"), resultType: .count)
        #expect(try store.fetch(request) == .count(3))
        var windowed = request
        windowed.fetchLimit = 2
        #expect(try store.fetch(windowed) == .count(2))
    }

    @Test func returnsObjectIDs() throws {
        let request = FetchRequest(
            entity: "Band", predicate: try FetchPredicate("country == 'US' OR country == nil"), resultType: .objectIDs)
        #expect(
            try store.fetch(request)
                == .objectIDs([ObjectID(entity: "Band", key: 3), ObjectID(entity: "Band", key: 4)]))
    }

    @Test func returnsDictionariesOfChosenProperties() throws {
        let request = FetchRequest(
            entity: "Album", predicate: try FetchPredicate("band.name BEGINSWITH 'Rue'"),
            sortDescriptors: [FetchSortDescriptor("year")], resultType: .dictionaries(["title", "band.name", "price"]))
        #expect(
            try store.fetch(request)
                == .dictionaries([
                    ["title": "Guide to an Escape", "band.name": "Rue Royale", "price": 9.99],
                    ["title": "Remedies Ahead", "band.name": "Rue Royale", "price": .null],
                ]))
    }

    @Test func objectsCarryValuesAndBothSidesOfRelationships() throws {
        guard
            case .objects(let bands) = try store.fetch(
                FetchRequest(entity: "Band", predicate: FetchPredicate("id == 2")))
        else { return }
        let band = try #require(bands.first)
        #expect(band[attribute: "name"] == "Sigur Rós")
        #expect(band[attribute: "founded"] == .date(Fixtures.date("1994-08-01")))
        #expect(band[attribute: "active"] == false)
        // Albums gave only `band`; the inverse was filled in, in data order.
        #expect(
            band.relationships["albums"]
                == .toMany([ObjectID(entity: "Album", key: 20), ObjectID(entity: "Album", key: 21)]))
        let track = try #require(store.node(for: ObjectID(entity: "Track", key: 201)))
        #expect(track.relationships["album"] == .toOne(ObjectID(entity: "Album", key: 20)))
    }

    @Test func upsertAndRemoveChangeLaterFetches() throws {
        store.upsert([
            Node(
                id: ObjectID(entity: "Band", key: 5), attributes: ["id": 5, "name": "Zola Jesus"],
                relationships: ["albums": .toMany([])])
        ])
        #expect(try Fixtures.keys(store, "Band", FetchPredicate("name BEGINSWITH 'Z'")) == [5])
        #expect(store.remove(ObjectID(entity: "Band", key: 5)))
        #expect(!store.remove(ObjectID(entity: "Band", key: 5)))
        #expect(try Fixtures.keys(store, "Band", FetchPredicate("name BEGINSWITH 'Z'")).isEmpty)
    }

    @Test func concurrentFetchesAgree() async throws {
        let request = FetchRequest(
            entity: "Album", predicate: try FetchPredicate("ANY tracks.seconds > 300"), resultType: .count)
        let store = self.store
        let counts = await withTaskGroup(of: FetchResult?.self) { group in
            for _ in 0..<50 { group.addTask { try? store.fetch(request) } }
            return await group.reduce(into: [FetchResult?]()) { $0.append($1) }
        }
        #expect(counts.allSatisfy { $0 == .count(3) })
    }

    @Test func fetchRequestDescriptionIsCanonical() throws {
        let a = FetchRequest(
            entity: "Album", predicate: try FetchPredicate("year = 1 && title == 'x'"),
            sortDescriptors: [FetchSortDescriptor("year", ascending: false)], fetchLimit: 5)
        let b = FetchRequest(
            entity: "Album", predicate: try FetchPredicate("year == 1 AND title == \"x\""),
            sortDescriptors: [FetchSortDescriptor("year", ascending: false)], fetchLimit: 5)
        #expect(a.description == b.description)
        #expect(a.description == "Album | year == 1 AND title == \"x\" | sort=-year | offset=0 | limit=5 | objects")
    }
}
