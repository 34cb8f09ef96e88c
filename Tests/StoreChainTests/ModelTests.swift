import StoreChain
import Testing

@Suite struct ModelTests {
    func problems(_ entities: [Entity]) -> [StoreChainError] {
        do {
            _ = try Model(entities)
            return []
        } catch {
            return error.errors
        }
    }

    let id = Attribute("id", .integer)

    @Test func acceptsAValidModelAndLooksUpByName() throws {
        let model = try Fixtures.model()
        #expect(model.entities.map(\.name) == ["Band", "Album", "Track"])
        #expect(model.entity(named: "Album")?.relationship(named: "tracks")?.isOrdered == true)
        #expect(model.entity(named: "Album")?.attribute(named: "price")?.isOptional == true)
        #expect(model.entity(named: "Nope") == nil)
    }

    @Test func reportsEveryProblemAtOnceWithKeyPaths() {
        let found = problems([
            Entity(
                "Band", key: "id", attributes: [id, Attribute("name", .string), Attribute("name", .integer)],
                relationships: [
                    Relationship("albums", .toMany(ordered: false), "Albun", inverse: "band"),
                    Relationship("label", .toOne, "Label"),
                ]),
            Entity("Album", key: "uid", attributes: [id]),
        ])
        let paths = found.compactMap(\.location?.path)
        #expect(
            paths == [
                "entities.Band.attributes.name", "entities.Band.relationships.albums",
                "entities.Band.relationships.label",
                "entities.Album.key",
            ])
        #expect(found[1].suggestion == "did you mean 'Album'?")
        #expect(found[3].message == "key 'uid' is not an attribute of entity 'Album'")
    }

    @Test func checksInverses() {
        let notThere = problems([
            Entity(
                "Band", key: "id", attributes: [id],
                relationships: [Relationship("albums", .toMany(ordered: false), "Album", inverse: "bnd")]),
            Entity(
                "Album", key: "id", attributes: [id],
                relationships: [Relationship("band", .toOne, "Band", inverse: "albums")]),
        ])
        #expect(notThere.count == 2)
        #expect(notThere[0].message == "inverse 'bnd' is not a relationship of entity 'Album'")
        #expect(notThere[0].suggestion == "did you mean 'band'?")
        #expect(notThere[1].message == "inverse 'Band.albums' does not name 'band' as its inverse")

        let wrongDestination = problems([
            Entity(
                "Band", key: "id", attributes: [id],
                relationships: [Relationship("albums", .toMany(ordered: false), "Album", inverse: "label")]),
            Entity(
                "Album", key: "id", attributes: [id],
                relationships: [Relationship("label", .toOne, "Album", inverse: "label")]),
        ])
        #expect(wrongDestination.first?.message == "inverse 'Album.label' leads to 'Album', not back to 'Band'")
    }

    @Test func checksKeysNamesAndDefaults() {
        let found = problems([
            Entity("Band", key: "id", attributes: [Attribute("id", .integer, optional: true)]),
            Entity("Album", key: "id", attributes: [Attribute("id", .double)]),
            Entity("9Track", key: "id", attributes: [id, Attribute("bad name", .string)]),
            Entity("Label", key: "id", attributes: [id, Attribute("rank", .integer, default: "high")]),
            Entity("Band", key: "id", attributes: [id]),
        ])
        let messages = found.map(\.message)
        #expect(messages.contains("key attribute 'id' must not be optional"))
        #expect(messages.contains("key attribute 'id' has type double"))
        #expect(messages.contains("entity name '9Track' is not an identifier"))
        #expect(messages.contains("attribute name 'bad name' is not an identifier"))
        #expect(messages.contains("default value high is not of the attribute's type integer"))
        #expect(messages.contains("entity 'Band' is declared twice"))
    }

    @Test func attributeAndRelationshipShareANamespace() {
        let found = problems([
            Entity(
                "Band", key: "id", attributes: [id, Attribute("albums", .integer)],
                relationships: [Relationship("albums", .toMany(ordered: false), "Band")])
        ])
        #expect(found.map(\.message) == ["'albums' is declared twice in entity 'Band'"])
    }
}
