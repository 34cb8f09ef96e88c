import Foundation
import StoreChain
import StoreChainPipeline
import Testing

@Suite struct ModelFileTests {
    func problems(_ text: String) -> [StoreChainError] {
        do {
            _ = try ModelFile.parse(text, source: "music.model.yml")
            Issue.record("expected the model to be rejected")
            return []
        } catch {
            return error.errors
        }
    }

    @Test func readsTheMinimalModelFromTheIssue() throws {
        let model = try ModelFile.parse(
            """
            entities:
              Band:
                key: id
                attributes: { id: integer, name: string, founded: date?, url: url? }
                relationships: { albums: { to-many: Album, inverse: band } }
              Album:
                key: id
                attributes: { id: integer, title: string, year: integer?, price: double? }
                relationships: { band: { to-one: Band, inverse: albums } }
            """)
        let band = try #require(model.entity(named: "Band"))
        #expect(band.attributes.map(\.name) == ["id", "name", "founded", "url"])
        #expect(band.attribute(named: "founded") == AttributeDescription("founded", .date, optional: true))
        #expect(
            band.relationship(named: "albums")
                == RelationshipDescription("albums", .toMany(ordered: false), "Album", inverse: "band"))
        #expect(model.entity(named: "Album")?.relationship(named: "band")?.isOptional == false)
    }

    @Test func readsLongFormsDefaultsAndOrderedRelationships() throws {
        let model = try ModelFile.parse(
            """
            entities:
              Album:
                attributes:
                  id: integer
                  price: { type: decimal, optional: true, default: 9.99 }
                  rating: { type: integer, default: 3 }
                  tags: json?
                  cover: { type: data, optional: yes }
                relationships:
                  tracks: { to-many: Track, inverse: album, ordered: true }
                  label: { to-one: Label? }
              Track:
                key: id
                attributes: { id: uuid, title: string, live: boolean? }
                relationships: { album: { to-one: Album?, inverse: tracks } }
              Label:
                key: name
                attributes: { name: string, site: url?, since: date? }
            """)
        let album = try #require(model.entity(named: "Album"))
        #expect(album.key == "id")
        #expect(album.attribute(named: "price")?.defaultValue == .decimal(Decimal(string: "9.99")!))
        #expect(album.attribute(named: "rating") == AttributeDescription("rating", .integer, default: 3))
        #expect(album.attribute(named: "tags")?.type == .json)
        #expect(album.attribute(named: "cover")?.isOptional == true)
        #expect(album.relationship(named: "tracks")?.isOrdered == true)
        #expect(album.relationship(named: "label")?.isOptional == true)
        #expect(model.entity(named: "Label")?.key == "name")
    }

    @Test func readsJSONModelFilesWithLineNumbers() throws {
        let json = """
            {
              "entities": {
                "Band": {
                  "key": "id",
                  "attributes": {"id": "integer", "name": "strin"}
                }
              }
            }
            """
        let found = problems(json)
        #expect(found.count == 1)
        #expect(found.first?.location?.line == 5)
        #expect(found.first?.description.contains("unknown attribute type 'strin' — did you mean 'string'?") == true)
        let good = try ModelFile.parse(json.replacingOccurrences(of: "strin\"", with: "string\""))
        #expect(good.entity(named: "Band")?.attribute(named: "name")?.type == .string)
    }

    @Test func reportsEveryProblemWithLineAndKeyPath() {
        let found = problems(
            """
            entities:
              Band:
                key: id
                atributes: { id: integer }
                relationships:
                  albums: { to-many: Albm, inverse: band }
              Album:
                key: id
                attributes: { id: integer, year: integr, title: string }
                relationships:
                  band: { to-one: Band, inverse: album }
                  label: { inverse: x }
            """)
        let summary = found.map { "\($0.location?.line ?? 0) \($0.location?.path ?? "")" }
        #expect(summary.contains("4 entities.Band.atributes"))
        #expect(summary.contains("3 entities.Band.attributes"))
        #expect(summary.contains("9 entities.Album.attributes.year"))
        #expect(summary.contains("12 entities.Album.relationships.label"))
        #expect(found.allSatisfy { $0.location?.file == "music.model.yml" })
        #expect(
            found.first { $0.location?.path == "entities.Band.atributes" }?.suggestion == "did you mean 'attributes'?")
    }

    @Test func modelRulesGetLineNumbersToo() {
        let found = problems(
            """
            entities:
              Band:
                key: id
                attributes: { id: integer }
                relationships:
                  albums: { to-many: Albm, inverse: band }
              Album:
                key: id
                attributes: { id: integer }
                relationships:
                  band: { to-one: Band, inverse: album }
            """)
        #expect(found.count == 2)
        #expect(found[0].location?.line == 6)
        #expect(found[0].description.contains("leads to entity 'Albm', which does not exist — did you mean 'Album'?"))
        #expect(found[1].location?.line == 11)
        #expect(found[1].location?.path == "entities.Album.relationships.band.inverse")
        #expect(found[1].suggestion == "did you mean 'albums'?")
    }

    @Test func readsDeleteRulesNullifyByDefault() throws {
        let model = try ModelFile.parse(
            """
            entities:
              Band:
                attributes: { id: integer }
                relationships: { albums: { to-many: Album, inverse: band, delete: cascade } }
              Album:
                attributes: { id: integer }
                relationships:
                  band: { to-one: Band, inverse: albums }
                  tracks: { to-many: Track, inverse: album, delete: deny }
              Track:
                attributes: { id: integer }
                relationships: { album: { to-one: Album?, inverse: tracks, delete: nullify } }
            """)
        #expect(model.entity(named: "Band")?.relationship(named: "albums")?.deleteRule == .cascade)
        #expect(model.entity(named: "Album")?.relationship(named: "band")?.deleteRule == .nullify)
        #expect(model.entity(named: "Album")?.relationship(named: "tracks")?.deleteRule == .deny)
        #expect(model.entity(named: "Track")?.relationship(named: "album")?.deleteRule == .nullify)
    }

    @Test func aBadDeleteRuleIsLocatedWithASuggestion() {
        let found = problems(
            """
            entities:
              Band:
                attributes: { id: integer }
                relationships:
                  albums: { to-many: Band, inverse: albums, delete: casade }
            """)
        #expect(found.count == 1)
        #expect(found.first?.location?.line == 5)
        #expect(found.first?.location?.path == "entities.Band.relationships.albums.delete")
        #expect(found.first?.message == "unknown delete rule 'casade'")
        #expect(found.first?.suggestion == "did you mean 'cascade'?")
        let far = problems(
            "entities:\n  Band: { attributes: { id: integer }, relationships: { a: { to-one: Band?, delete: [x] } } }")
        #expect(far.contains { $0.location?.path == "entities.Band.relationships.a.delete" }, "\(far)")
    }

    @Test(arguments: [
        ("", "the model file is empty"),
        ("entities: [1, 2]", "expected a mapping of names to values"),
        ("entitys: {}", "did you mean 'entities'?"),
        ("entities:\n  Band: { attributes: { name: string } }", "names no key and has no 'id' attribute"),
        ("entities:\n  Band: { key: id, attributes: { id: { optional: true } } }", "has no type"),
        (
            "entities:\n  Band: { attributes: { id: integer, n: { type: integer, default: abc } } }",
            "cannot read string \"abc\" as integer"
        ),
        (
            "entities:\n  Band: { attributes: { id: integer }, relationships: { a: { to-one: Band, to-many: Band } } }",
            "exactly one of 'to-one' or 'to-many'"
        ),
        (
            "entities:\n  Band: { attributes: { id: integer }, relationships: { a: { to-many: Band? } } }",
            "cannot be optional"
        ),
        (
            "entities:\n  Band: { attributes: { id: integer }, relationships: { a: { to-one: Band, ordered: true } } }",
            "only to-many relationships can be ordered"
        ),
        (
            "entities:\n  Band: { attributes: { id: integer }, relationships: { a: { to-many: Band, inverse: a, sorted: true } } }",
            "unknown key 'sorted'"
        ),
        (
            "entities:\n  Band: { attributes: { id: integer } }\n  Band: { attributes: { id: integer } }",
            "'Band' appears twice in one mapping"
        ),
        ("entities:\n  Band: {\n    attributes: [\n", "not valid YAML or JSON"),
    ])
    func rejectsBadFiles(_ text: String, _ fragment: String) {
        let found = problems(text)
        #expect(found.contains { $0.description.contains(fragment) }, "\(found)")
    }

    @Test func syntaxErrorsHaveALine() {
        let found = problems("entities:\n  Band:\n    key: id\n   attributes: {id: integer}\n")
        #expect(found.first?.code == .unreadableFile)
        #expect(found.first?.location?.line == 4)
    }

    @Test func missingFileIsAClearError() {
        let url = URL(filePath: "/nonexistent/music.model.yml")
        #expect(throws: ValidationFailure.self) { try ModelFile.load(contentsOf: url) }
        do {
            _ = try ModelFile.load(contentsOf: url)
        } catch {
            #expect(error.description.contains("/nonexistent/music.model.yml: cannot read the model file"))
        }
    }
}
