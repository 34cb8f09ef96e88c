import Foundation
import StoreChainTesting
import Testing

@testable import StoreChain

/// What a save may have changed of an object whose states before and after it are both cached.
@Suite struct SaveEffectTests {
    let band = ObjectID(entity: "Band", key: .integer(4))

    /// A band inserted earlier, cached without its `albums` (its insert's answer did not give
    /// them), and an album saved for it: the list is unknown before and after (dropped), yet the
    /// save changed it. Taken as unchanged, a cached `albums.@count >= 1` window was kept
    /// without the band.
    @Test func aPropertyTheSaveChangedAndLeftUnknownHasChanged() {
        var effect = SaveEffect()
        effect.before[band] = Node(id: band, attributes: ["name": "New band"])
        effect.after[band] = Node(id: band, attributes: ["name": "New band"])
        effect.changedProperties[band] = ["albums"]
        #expect(effect.mayHaveChanged(["albums"], of: band))
        #expect(!effect.mayHaveChanged(["name"], of: band), "the name is known and the same")
    }

    /// Where both states hold the property, the states decide, not what the save sent.
    @Test func aPropertyKnownAfterTheSaveHasChangedOnlyIfItDiffers() {
        let album = ObjectID(entity: "Album", key: .integer(1))
        var effect = SaveEffect()
        effect.before[album] = Node(id: album, attributes: ["year": 1990])
        effect.after[album] = Node(id: album, attributes: ["year": 1990])
        effect.changedProperties[album] = ["year"]
        #expect(!effect.mayHaveChanged(["year"], of: album), "set to the value it had")
        effect.after[album] = Node(id: album, attributes: ["year": 1991])
        #expect(effect.mayHaveChanged(["year"], of: album))
    }
}

/// What a window edit may take as known about a changed object.
@Suite struct WindowEditKnowledgeTests {
    func id(_ entity: String, _ key: Int) -> ObjectID { ObjectID(entity: entity, key: .integer(key)) }

    /// `ANY albums.id >= 5` reads the album objects (a to-many is read object by object, unlike
    /// `band.id`, which the relationship's ID answers): a band whose list is cached but not its
    /// albums cannot be placed, and the window is dropped. It was kept without the band, which
    /// holds album 6.
    @Test func aToManyKeyPathEndingAtTheKeyNeedsTheObjects() throws {
        let model = try Fixtures.model()
        let request = try TestData.fetch("Band", where: "ANY albums.id >= 5", sort: [FetchSortDescriptor("id")])
        let query = CachedQuery(
            request: request, ids: [id("Band", 1)], reachesEnd: true, freshness: Freshness(expiresAt: .distantFuture),
            reads: ["Band", "Album"])
        let plan = try FetchPlan(request, model: model)
        let changed = Node(
            id: id("Band", 2), attributes: ["name": "Renamed"],
            relationships: ["albums": .toMany([id("Album", 6)])])
        var effect = SaveEffect()
        effect.after[changed.id] = changed
        effect.changedProperties[changed.id] = ["name", "albums"]
        let band1 = Node(id: id("Band", 1), relationships: ["albums": .toMany([id("Album", 5)])])
        let album1 = Node(id: id("Album", 5), attributes: ["id": 5])
        let edit = WindowEdit(query: query, plan: plan, model: model)
        let edited = edit.applying(effect, source: [band1.id: band1, album1.id: album1, changed.id: changed])
        #expect(edited == nil, "album 6 is not in the source: the band cannot be placed")
    }
}
