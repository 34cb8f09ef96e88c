import Foundation
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
