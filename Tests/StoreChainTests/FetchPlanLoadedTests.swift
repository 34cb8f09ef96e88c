import Foundation
import StoreChain
import StoreChainTesting
import Testing

/// `FetchPlan.requireLoaded`: an answer is never computed over related objects that were not
/// loaded (a missing album sorts as `nil`, a silent wrong answer).
@Suite struct FetchPlanLoadedTests {
    static func album(_ key: Int, year: Int) -> Node {
        Node(
            id: ObjectID(entity: "Album", key: .integer(key)),
            attributes: ["id": .integer(key), "year": .integer(year)])
    }

    static func track(_ key: Int, album: Int) -> Node {
        Node(
            id: ObjectID(entity: "Track", key: .integer(key)), attributes: ["id": .integer(key)],
            relationships: ["album": .toOne(ObjectID(entity: "Album", key: .integer(album)))])
    }

    static let tracks = [track(1, album: 10), track(2, album: 11)]

    @Test func aSortThroughAMissingObjectIsAnErrorNamingIt() throws {
        let plan = try FetchPlan(
            FetchRequest(entity: "Track", sortDescriptors: [FetchSortDescriptor("album.year", ascending: false)]),
            model: try Fixtures.model())
        let partial: [ObjectID: Node] = [Self.album(10, year: 1990).id: Self.album(10, year: 1990)]
        let error = #expect(throws: StoreChainError.self) { try plan.requireLoaded(Self.tracks, source: partial) }
        #expect(error?.code == .incompleteData)
        #expect(error?.description.contains("Album/11") == true, "\(String(describing: error))")
        #expect(error?.description.contains("Track/2.album") == true, "\(String(describing: error))")

        let whole = Dictionary(
            uniqueKeysWithValues: [Self.album(10, year: 1990), Self.album(11, year: 2000)].map {
                ($0.id, $0)
            })
        try plan.requireLoaded(Self.tracks, source: whole)
    }

    @Test func keysAndCountsNeedOnlyTheIDsTheObjectsHold() throws {
        for (format, sort) in [("album.id == 10", "id"), ("album != nil", "album.id")] {
            let plan = try FetchPlan(
                FetchRequest(
                    entity: "Track", predicate: try FetchPredicate(format),
                    sortDescriptors: [try FetchSortDescriptor(parsing: sort)]), model: try Fixtures.model())
            try plan.requireLoaded(Self.tracks, source: EmptyNodeSource())
        }
        let count = try FetchPlan(
            FetchRequest(entity: "Album", predicate: try FetchPredicate("tracks.@count > 1")),
            model: try Fixtures.model())
        let album = Node(
            id: ObjectID(entity: "Album", key: .integer(10)),
            relationships: ["tracks": .toMany(Self.tracks.map(\.id))])
        try count.requireLoaded([album], source: EmptyNodeSource())
        let names = try FetchPlan(
            FetchRequest(entity: "Album", predicate: try FetchPredicate("ANY tracks.title == 'x'")),
            model: try Fixtures.model())
        #expect(throws: StoreChainError.self) { try names.requireLoaded([album], source: EmptyNodeSource()) }
    }
}
