import Foundation
import StoreChainTesting
import Testing

@testable import StoreChain

/// A context's object table: each object reads its own row through its slot, whatever happens
/// to the other slots around it (IDs forgotten, remapped, slots reused).
@Suite struct ObjectTableTests {
    private let context: ObjectContext

    init() throws {
        let model = try MusicFixture.model()
        context = ObjectContext(chain: Chain(handlers: [], terminal: InMemoryStore(model: model)), model: model)
    }

    private func band(_ key: Int) -> ObjectID { ObjectID(entity: "Band", key: .integer(key)) }

    private func row(_ id: ObjectID, name: String, relationships: [String: RelationshipValue] = [:]) -> Node {
        Node(id: id, attributes: ["name": .string(name)], relationships: relationships)
    }

    private func object(_ id: ObjectID, in table: inout ObjectTable) -> ManagedObject {
        table.object(for: id) { slot in
            ManagedObject(
                id: id, slot: slot, entityPosition: context.model.entityPosition(named: id.entity), context: context)
        }
    }

    @Test func anObjectReadsItsRowAndALaterNodeReplacesAttributesButKeepsUnmentionedRelationships() {
        var table = ObjectTable()
        let id = band(1)
        let album = ObjectID(entity: "Album", key: .integer(7))
        table.absorb(row(id, name: "Low", relationships: ["albums": .toMany([album])]))
        let object = object(id, in: &table)
        #expect(object === self.object(id, in: &table), "one object per ID while it is alive")
        #expect(table.value("name", of: object) == .string("Low"))
        #expect(table.value("formed", of: object) == .null, "an attribute the row lacks is nil")

        table.absorb(row(id, name: "Slowdive"))
        #expect(table.value("name", of: object) == .string("Slowdive"))
        #expect(table.row(of: object)?.relationships["albums"] == .toMany([album]))
    }

    @Test func aForgottenObjectReadsByIDAndItsSlotIsNeverAnotherObjects() {
        var table = ObjectTable()
        let kept = band(1)
        let old = object(kept, in: &table)
        table.absorb(row(kept, name: "Low"))
        table.forget(kept)
        #expect(table.value("name", of: old) == nil, "a forgotten object has no row")

        // Thousands of objects come and go, so freed slots are reused for other IDs.
        for key in 2...3_000 {
            _ = object(band(key), in: &table)
        }
        for key in 3_001...6_000 {
            table.absorb(row(band(key), name: "Band \(key)"))
        }
        #expect(table.value("name", of: old) == nil, "no other ID's row reaches the old object")

        table.absorb(row(kept, name: "Low again"))
        let new = object(kept, in: &table)
        #expect(new !== old, "a forgotten ID gets a new object")
        #expect(table.value("name", of: old) == .string("Low again"))
        #expect(table.value("name", of: new) == .string("Low again"))
        for key in [3_001, 4_500, 6_000] {
            #expect(table.value("name", of: object(band(key), in: &table)) == .string("Band \(key)"))
        }
    }

    @Test func aTemporaryIDRemappedOntoAKnownOneKeepsItsRowAndObjectAndTheOtherObjectFollows() {
        var table = ObjectTable()
        let temporary = ObjectID.temporary(entity: "Band")
        let permanent = band(42)
        let inserted = object(temporary, in: &table)
        table.setRow(row(temporary, name: "Inserted"))
        let known = object(permanent, in: &table)
        table.absorb(row(permanent, name: "Fetched"))

        inserted.updateID(permanent)
        table.remap(temporary, to: permanent)
        #expect(object(permanent, in: &table) === inserted, "the temporary's object is the ID's object now")
        #expect(table.row(of: inserted)?.id == permanent)
        #expect(table.value("name", of: inserted) == .string("Inserted"))
        #expect(table.value("name", of: known) == .string("Inserted"), "the other object reads by ID")
        #expect(table.row(for: temporary) == nil)

        table.absorb(row(permanent, name: "Saved"))
        #expect(table.value("name", of: known) == .string("Saved"))
        #expect(table.value("name", of: inserted) == .string("Saved"))
    }

    @Test func aRemappedTemporaryWithoutARowTakesTheKnownRow() {
        var table = ObjectTable()
        let temporary = ObjectID.temporary(entity: "Band")
        let permanent = band(42)
        let inserted = object(temporary, in: &table)
        table.absorb(row(permanent, name: "Fetched"))
        inserted.updateID(permanent)
        table.remap(temporary, to: permanent)
        #expect(table.value("name", of: inserted) == .string("Fetched"))
        #expect(table.knows(permanent) && !table.knows(temporary))
    }

    @Test func aRemovedRowMakesALiveObjectAFaultAgainAndUpdatesReachOnlyKnownRows() {
        var table = ObjectTable()
        let id = band(1)
        let object = object(id, in: &table)
        table.absorb(row(id, name: "Low"))
        table.removeRow(for: id)
        #expect(table.row(of: object) == nil)
        #expect(table.knows(id), "the live object is still known")

        table.updateRow(for: band(2)) { $0.version = "2" }
        #expect(table.row(for: band(2)) == nil, "updating an unknown row makes none")
        table.absorb(row(id, name: "Low"))
        table.updateRow(for: id) { $0.version = "3" }
        #expect(table.row(of: object)?.version == "3")
    }
}
