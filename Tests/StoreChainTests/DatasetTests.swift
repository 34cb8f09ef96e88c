import StoreChain
import StoreChainTesting
import Testing

@Suite struct DatasetTests {
    @Test func removingKeepsEachEntitysOrderAndEveryOtherNode() {
        var dataset = Dataset(
            (1...5).map { TestData.node("Album", $0, ["title": .string("A\($0)")]) } + [TestData.node("Band", 1)]
                + [TestData.node("Album", 6)])
        let removed = dataset.remove(ObjectID(entity: "Album", key: 2))
        let removedAgain = dataset.remove(ObjectID(entity: "Album", key: 2))
        #expect(removed && !removedAgain)
        #expect(dataset.ids(of: "Album").map(\.key) == [1, 3, 4, 5, 6])
        dataset.remove(ObjectID(entity: "Album", key: 1))
        #expect(dataset.ids(of: "Album").map(\.key) == [3, 4, 5, 6])
        #expect(dataset.ids(of: "Band").map(\.key) == [1])
        #expect(dataset.count == 5)
        for key in [3, 4, 5] {
            #expect(
                dataset.node(for: ObjectID(entity: "Album", key: .integer(key)))?.attributes["title"]
                    == .string("A\(key)"))
        }
        #expect(dataset.node(for: ObjectID(entity: "Album", key: 1)) == nil)
        dataset.upsert(TestData.node("Album", 4, ["title": "again"]))
        dataset.upsert(TestData.node("Album", 2))
        #expect(dataset.ids(of: "Album").map(\.key) == [3, 4, 5, 6, 2])
        #expect(dataset.node(for: ObjectID(entity: "Album", key: 4))?.attributes["title"] == "again")
        for id in dataset.ids(of: "Album") + dataset.ids(of: "Band") {
            let removed = dataset.remove(id)
            #expect(removed, "\(id)")
        }
        #expect(dataset.count == 0)
        #expect(dataset.nodes(of: "Album").isEmpty)
    }

    @Test func manyRemovalsKeepTheOrderAndTheIndex() {
        var dataset = Dataset((0..<100).map { TestData.node("Track", $0, ["number": .integer($0)]) })
        var kept = Array(0..<100)
        // Enough removals that the emptied slots are compacted more than once.
        for key in (0..<100).filter({ $0 % 3 != 0 }) + [0, 99] {
            dataset.remove(ObjectID(entity: "Track", key: .integer(key)))
            kept.removeAll { $0 == key }
        }
        dataset.upsert(TestData.node("Track", 1))
        kept.append(1)
        #expect(dataset.ids(of: "Track").compactMap(\.key) == kept.map(Value.integer))
        #expect(dataset.count == kept.count)
        for key in kept where key != 1 {
            #expect(
                dataset.node(for: ObjectID(entity: "Track", key: .integer(key)))?.attributes["number"] == .integer(key))
        }
        #expect(dataset.node(for: ObjectID(entity: "Track", key: 2)) == nil)
    }
}
