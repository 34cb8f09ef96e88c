import Foundation
import StoreChain
import StoreChainTesting
import Testing

@Suite struct JSONFileStoreTests {
    let directory: URL

    init() throws {
        directory = TemporaryFolder.make("storechain")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    }

    func write(_ text: String, to name: String = "data.json") throws -> URL {
        let url = directory.appending(path: name)
        try Data(text.utf8).write(to: url)
        return url
    }

    @Test func loadsAFileAndAnswersFetches() throws {
        let url = try write(Fixtures.recordsJSON)
        let store = try JSONFileStore(contentsOf: url, model: Fixtures.model())
        let request = FetchRequest(
            entity: "Track", predicate: try FetchPredicate("album.band.name ==[cd] 'sigur ros'"), resultType: .count)
        #expect(try store.fetch(request) == .count(3))
    }

    @Test func malformedFileNamesTheFileAndOffset() throws {
        let url = try write("{\"Band\": [\n  {\"id\": 1,, \"name\": \"x\"}\n]}")
        let error = #expect(throws: StoreChainError.self) {
            try JSONFileStore(contentsOf: url, model: Fixtures.model())
        }
        #expect(error?.code == .malformedJSON)
        #expect(error?.location?.file == url.path)
        #expect(error?.location?.line == 2)
        #expect(error?.location?.offset == 22)
        #expect(error?.location?.column == 12)
    }

    @Test func missingFileIsAClearError() throws {
        let url = directory.appending(path: "nope.json")
        let error = #expect(throws: StoreChainError.self) {
            try JSONFileStore(contentsOf: url, model: Fixtures.model())
        }
        #expect(error?.code == .unreadableFile)
        #expect(error?.description.contains("nope.json") == true)
    }

    @Test func badValueNamesTheFileAndJSONPath() throws {
        let url = try write(#"{"Album": [{"id": 1, "title": "x", "year": "MCMXC"}]}"#)
        let error = #expect(throws: StoreChainError.self) {
            try JSONFileStore(contentsOf: url, model: Fixtures.model())
        }
        #expect(
            error?.description.hasPrefix("\(url.path): $.Album[0].year: cannot read string \"MCMXC\" as integer")
                == true)
    }
}
