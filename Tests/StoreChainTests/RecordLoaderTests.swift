import Foundation
@_spi(Internals) import StoreChain
import Testing

@Suite struct RecordLoaderTests {
    let model: ObjectModel

    init() throws {
        model = try Fixtures.model()
    }

    func load(_ json: String) throws -> Dataset {
        try RecordLoader(model: model, source: "music.json").load(JSONParser().parse(json))
    }

    /// The error from the parsed tree, checked equal to the one reading the text record by record.
    func loadError(_ json: String) -> StoreChainError? {
        let fromTree = #expect(throws: StoreChainError.self) { try load(json) }
        let streamed = #expect(throws: StoreChainError.self) {
            try RecordLoader(model: model, source: "music.json").load(json: Array(json.utf8))
        }
        #expect(streamed == fromTree, "reading record by record reports what the tree does")
        return fromTree
    }

    @Test func readingRecordByRecordGivesTheDatasetOfTheTree() throws {
        let json = #"""
            {"Album": [{"id": 10, "title": "x", "band": 1}, {"id": 11, "title": "y", "year": null, "band": 2}],
             "Band": [{"id": 1, "name": "a", "country": null}, {"id": 2, "name": "b", "founded": "1990-01-02"}]}
            """#
        let fromTree = try load(json)
        let streamed = try RecordLoader(model: model, source: "music.json").load(json: Array(json.utf8))
        for entity in ["Album", "Band"] {
            #expect(streamed.nodes(of: entity) == fromTree.nodes(of: entity))
            #expect(streamed.nodes(of: entity).count == 2)
        }
        // A null is a missing value: absent, not held as null.
        let band = try #require(streamed.node(for: ObjectID(entity: "Band", key: 1)))
        #expect(band.attributes == ["id": 1, "name": "a"])
        #expect(streamed.node(for: ObjectID(entity: "Album", key: 11))?.attributes["year"] == nil)
        let malformed = #expect(throws: StoreChainError.self) {
            try RecordLoader(model: model, source: "music.json").load(json: Array(#"{"Band": [{"id": 1,}]}"#.utf8))
        }
        #expect(malformed?.code == .malformedJSON)
        #expect(malformed?.location?.offset == 19)
    }

    @Test(arguments: [
        (#"[]"#, "$", "the top level is a array"),
        (#"{"Bnd": []}"#, "$.Bnd", "did you mean 'Band'?"),
        (#"{"Band": {}}"#, "$.Band", "expected an array of records"),
        (#"{"Band": [1]}"#, "$.Band[0]", "expected a record object"),
        (#"{"Band": [{"id": 1, "name": "x", "nmae": "y"}]}"#, "$.Band[0].nmae", "did you mean 'name'?"),
        (#"{"Band": [{"id": 1}]}"#, "$.Band[0].name", "required attribute 'name' is missing"),
        (#"{"Band": [{"id": "one", "name": "x"}]}"#, "$.Band[0].id", "cannot read string \"one\" as integer"),
        (#"{"Band": [{"id": 1, "name": "x", "founded": "soon"}]}"#, "$.Band[0].founded", "expected an ISO-8601 string"),
        (
            #"{"Band": [{"id": 1, "name": "x"}, {"id": 1, "name": "y"}]}"#, "$.Band[1].id",
            "Band/1 appears twice (first at $.Band[0])"
        ),
        (
            #"{"Album": [{"id": 1, "title": "x", "band": 9}]}"#, "$.Album[0].band",
            "Album/1 refers to Band/9, which is not in the data"
        ),
        (
            #"{"Album": [{"id": 1, "title": "x"}]}"#, "$.Album[0].band",
            "required relationship 'band' of Album/1 is missing"
        ),
        (#"{"Album": [{"id": 1, "title": "x", "band": {"id": 1}}]}"#, "$.Album[0].band", "found an object"),
        (#"{"Band": [{"id": 1, "name": "x", "albums": 5}]}"#, "$.Band[0].albums", "expected an array of Album keys"),
        (#"{"Band": [{"id": 1, "name": "x", "albums": [1, 1]}]}"#, "$.Band[0].albums[1]", "Album/1 is listed twice"),
        (
            #"{"Band": [{"id": 1, "name": "x", "albums": ["a"]}]}"#, "$.Band[0].albums[0]",
            "cannot read string \"a\" as integer"
        ),
    ])
    func badDataSaysWhereAndWhat(_ json: String, _ path: String, _ fragment: String) {
        let error = loadError(json)
        #expect(error?.code == .invalidData)
        #expect(error?.location?.path == path, "\(error?.description ?? "")")
        #expect(error?.location?.file == "music.json")
        #expect(error?.description.contains(fragment) == true, "\(error?.description ?? "")")
    }

    @Test func fillsInversesFromEitherSide() throws {
        let dataset = try load(
            #"""
            {"Band": [{"id": 1, "name": "a", "albums": [11, 10]}, {"id": 2, "name": "b"}],
             "Album": [{"id": 10, "title": "x"}, {"id": 11, "title": "y"}, {"id": 12, "title": "z", "band": 2}]}
            """#)
        #expect(
            dataset.node(for: ObjectID(entity: "Album", key: 10))?.relationships["band"]
                == .toOne(ObjectID(entity: "Band", key: 1)))
        #expect(
            dataset.node(for: ObjectID(entity: "Band", key: 2))?.relationships["albums"]
                == .toMany([ObjectID(entity: "Album", key: 12)]))
        #expect(
            dataset.node(for: ObjectID(entity: "Band", key: 1))?.relationships["albums"]
                == .toMany([ObjectID(entity: "Album", key: 11), ObjectID(entity: "Album", key: 10)]))
        #expect(dataset.node(for: ObjectID(entity: "Album", key: 12))?.relationships["tracks"] == .toMany([]))
    }

    @Test func bothSidesMustAgree() {
        let error = loadError(
            #"""
            {"Band": [{"id": 1, "name": "a", "albums": [10]}, {"id": 2, "name": "b"}],
             "Album": [{"id": 10, "title": "x", "band": 1}, {"id": 11, "title": "y", "band": 1}]}
            """#)
        #expect(error?.location?.path == "$.Band[0].albums")
        #expect(error?.message.contains("Album/11 says it belongs to Band/1") == true)

        let twoOwners = loadError(
            #"""
            {"Band": [{"id": 1, "name": "a", "albums": [10]}, {"id": 2, "name": "b", "albums": [10]}],
             "Album": [{"id": 10, "title": "x"}]}
            """#)
        #expect(twoOwners?.message.contains("is claimed by 2 objects") == true)
    }

    @Test func appliesDefaults() throws {
        let model = try ObjectModel([
            EntityDescription(
                "Tag", key: "id",
                attributes: [AttributeDescription("id", .string), AttributeDescription("weight", .integer, default: 1)])
        ])
        let dataset = try RecordLoader(model: model).load(
            JSONParser().parse(#"{"Tag": [{"id": "a"}, {"id": "b", "weight": 5}]}"#))
        #expect(dataset.nodes(of: "Tag").map { $0[attribute: "weight"] } == [1, 5])
    }
}
