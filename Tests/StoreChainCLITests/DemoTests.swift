import Foundation
import StoreChain
import StoreChainDemoBackend
import StoreChainPipeline
import Testing

@Suite struct DemoTests {
    @Test func demoRunsToCompletion() throws {
        let outcome = try CommandRunner.run(["demo", "--bands", "40"])
        #expect(outcome.status == 0, "\(outcome.stderr)")
        #expect(outcome.stderr.isEmpty)
        #expect(outcome.stdout.contains("a music catalog of 40 bands"))
        #expect(outcome.stdout.contains("fetch Band where name BEGINSWITH[c] \"rue\""))
        #expect(outcome.stdout.contains("1   Rue Royale"))
        #expect(outcome.stdout.contains("8. Just the properties asked for"))
        #expect(outcome.stdout.contains("10. The same walk with albums and tracks prefetched: "))
        #expect(outcome.stdout.contains("tracks, 1 request(s)"))
        #expect(outcome.stdout.contains("11. Insert an album and save: Album/temp:"))
        #expect(outcome.stdout.contains("6 precise questions cost\n   1 request(s)"))
        #expect(outcome.stdout.contains("the cache still answers 4 of 4 of them"))
    }

    @Test func embeddedModelMatchesTheExampleFile() throws {
        let file = CommandRunner.packageRoot.appending(path: "Examples/Music/music.model.yml")
        #expect(try String(contentsOf: file, encoding: .utf8) == DemoCatalogModel.text)
    }

    @Test func catalogIsDeterministicAndFitsTheModel() throws {
        let model = try ModelFile.parse(DemoCatalogModel.text)
        let records = DemoCatalog().records()
        #expect(records == DemoCatalog().records())
        #expect(records != DemoCatalog(seed: 1).records())
        let dataset = try RecordLoader(model: model).load(records)
        #expect(dataset.nodes(of: "Band").count == 200)
        #expect((1_300...1_700).contains(dataset.nodes(of: "Album").count))
        #expect((13_000...17_000).contains(dataset.nodes(of: "Track").count))
    }

    @Test func exampleDataLoads() throws {
        let model = try ModelFile.load(
            contentsOf: CommandRunner.packageRoot.appending(path: "Examples/Music/music.model.yml"))
        let store = try JSONFileStore(
            contentsOf: CommandRunner.packageRoot.appending(path: "Examples/Music/music.json"), model: model)
        #expect(try store.fetch(FetchRequest(entity: "Album", resultType: .count)) == .count(12))
    }
}
