import Foundation
import StoreChain
import Testing

/// `AttributeValues` answers as the `[String: Value]` it replaced did, in name order.
@Suite struct AttributeValuesTests {
    @Test func readsLikeADictionaryInNameOrder() {
        var values: AttributeValues = ["name": "Muse", "founded": 1994, "country": "UK"]
        #expect(values.keys == ["country", "founded", "name"])
        #expect(values.map(\.key) == ["country", "founded", "name"])
        #expect(values["founded"] == 1994)
        #expect(values["missing"] == nil)
        values["genre"] = "Rock"
        values["name"] = "Muse!"
        values["country"] = nil
        #expect(values.keys == ["founded", "genre", "name"])
        #expect(values.values == [1994, "Rock", "Muse!"])
        #expect(values.removeValue(forKey: "genre") == "Rock")
        #expect(values.removeValue(forKey: "genre") == nil)
        #expect(values == ["name": "Muse!", "founded": 1994])
        #expect(values.filter { $0.key != "name" } == ["founded": 1994])
        // An explicit null is held, as a dictionary holds it; only `nil` removes a name.
        values["url"] = .some(.null)
        #expect(values.count == 3)
        #expect(values.dictionary == ["name": "Muse!", "founded": 1994, "url": .null])
    }

    @Test func unsortedNamesWithRepeatsKeepEachNameOnceWithItsLastValue() {
        let values = AttributeValues(
            names: ["year", "title", "year", "id", "title", "year"], values: [1, "a", 2, 7, "b", 3])
        #expect(values.keys == ["id", "title", "year"])
        #expect(values.values == [7, "b", 3])
        let literal: AttributeValues = ["b": 1, "a": 2, "b": 3]
        #expect(literal.dictionary == ["a": 2, "b": 3])
    }

    @Test func theSameValuesAreEqualWhateverOrderTheyCameIn() {
        let names = (0..<20).map { "attribute\($0)" }
        var forward = AttributeValues()
        for (index, name) in names.enumerated() { forward[name] = .integer(index) }
        var backward = AttributeValues()
        for (index, name) in names.enumerated().reversed() { backward[name] = .integer(index) }
        let dictionary = Dictionary(
            uniqueKeysWithValues: names.enumerated().map { ($0.element, Value.integer($0.offset)) })
        #expect(forward == backward)
        #expect(forward == AttributeValues(dictionary))
        #expect(forward.hashValue == backward.hashValue)
        #expect(forward.keys == names.sorted())
        // More names than a scan is used for: looked up by binary search.
        for (index, name) in names.enumerated() { #expect(backward[name] == .integer(index)) }
        #expect(backward["attribute"] == nil)
        #expect(backward["attribute99"] == nil)
        #expect(backward["zzz"] == nil)
    }

    @Test func namesInAnyOrderAreSortedAndTheLastOfARepeatedNameWins() {
        let values = AttributeValues(names: ["title", "id", "title"], values: ["a", 1, "b"])
        #expect(values.keys == ["id", "title"])
        #expect(values == ["id": 1, "title": "b"])
    }

    @Test func nodesOfOneEntityShareTheirNames() throws {
        let entity = EntityDescription(
            "Track", key: "id",
            attributes: [
                AttributeDescription("id", .integer), AttributeDescription("title", .string),
                AttributeDescription("genre", .string, optional: true),
            ])
        func build(_ id: Int, genre: String?) -> AttributeValues {
            entity.attributeValues { attribute in
                switch attribute.name {
                case "id": .integer(id)
                case "title": .string("Track \(id)")
                default: genre.map(Value.string)
                }
            }
        }
        let first = build(1, genre: "Jazz")
        let second = build(2, genre: "Rock")
        #expect(first == ["id": 1, "title": "Track 1", "genre": "Jazz"])
        #expect(first.keys == ["genre", "id", "title"])
        let firstNames = first.keys.withUnsafeBufferPointer { $0.baseAddress }
        let secondNames = second.keys.withUnsafeBufferPointer { $0.baseAddress }
        #expect(firstNames == secondNames, "one names array for every node of the entity")
        let withoutGenre = build(3, genre: nil)
        #expect(withoutGenre == ["id": 3, "title": "Track 3"])
        #expect(withoutGenre["genre"] == nil)
    }

    @Test func encodesAsAJSONObject() throws {
        let values: AttributeValues = ["name": "Muse", "founded": 1994]
        let data = try JSONEncoder().encode(values)
        #expect(try JSONDecoder().decode([String: Value].self, from: data) == values.dictionary)
        #expect(try JSONDecoder().decode(AttributeValues.self, from: data) == values)
        #expect(values.description == #"["founded": 1994, "name": Muse]"#, "as a dictionary of values prints")
    }
}
