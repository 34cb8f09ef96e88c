import StoreChain
import Testing

@Suite struct ModelTests {
    func problems(_ entities: [EntityDescription]) -> [StoreChainError] {
        do {
            _ = try ObjectModel(entities)
            return []
        } catch {
            return error.errors
        }
    }

    let id = AttributeDescription("id", .integer)

    @Test func acceptsAValidModelAndLooksUpByName() throws {
        let model = try Fixtures.model()
        #expect(model.entities.map(\.name) == ["Band", "Album", "Track"])
        #expect(model.entity(named: "Album")?.relationship(named: "tracks")?.isOrdered == true)
        #expect(model.entity(named: "Album")?.attribute(named: "price")?.isOptional == true)
        #expect(model.entity(named: "Nope") == nil)
    }

    @Test func reportsEveryProblemAtOnceWithKeyPaths() {
        let found = problems([
            EntityDescription(
                "Band", key: "id",
                attributes: [id, AttributeDescription("name", .string), AttributeDescription("name", .integer)],
                relationships: [
                    RelationshipDescription("albums", .toMany(ordered: false), "Albun", inverse: "band"),
                    RelationshipDescription("label", .toOne, "Label"),
                ]),
            EntityDescription("Album", key: "uid", attributes: [id]),
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
            EntityDescription(
                "Band", key: "id", attributes: [id],
                relationships: [RelationshipDescription("albums", .toMany(ordered: false), "Album", inverse: "bnd")]),
            EntityDescription(
                "Album", key: "id", attributes: [id],
                relationships: [RelationshipDescription("band", .toOne, "Band", inverse: "albums")]),
        ])
        #expect(notThere.count == 2)
        #expect(notThere[0].message == "inverse 'bnd' is not a relationship of entity 'Album'")
        #expect(notThere[0].suggestion == "did you mean 'band'?")
        #expect(notThere[1].message == "inverse 'Band.albums' does not name 'band' as its inverse")

        let wrongDestination = problems([
            EntityDescription(
                "Band", key: "id", attributes: [id],
                relationships: [RelationshipDescription("albums", .toMany(ordered: false), "Album", inverse: "label")]),
            EntityDescription(
                "Album", key: "id", attributes: [id],
                relationships: [RelationshipDescription("label", .toOne, "Album", inverse: "label")]),
        ])
        #expect(wrongDestination.first?.message == "inverse 'Album.label' leads to 'Album', not back to 'Band'")
    }

    @Test func checksKeysNamesAndDefaults() {
        let found = problems([
            EntityDescription("Band", key: "id", attributes: [AttributeDescription("id", .integer, optional: true)]),
            EntityDescription("Album", key: "id", attributes: [AttributeDescription("id", .double)]),
            EntityDescription("9Track", key: "id", attributes: [id, AttributeDescription("bad name", .string)]),
            EntityDescription(
                "Label", key: "id", attributes: [id, AttributeDescription("rank", .integer, default: "high")]),
            EntityDescription("Band", key: "id", attributes: [id]),
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
            EntityDescription(
                "Band", key: "id", attributes: [id, AttributeDescription("albums", .integer)],
                relationships: [RelationshipDescription("albums", .toMany(ordered: false), "Band")])
        ])
        #expect(found.map(\.message) == ["'albums' is declared twice in entity 'Band'"])
    }
}
