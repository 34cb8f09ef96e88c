import Foundation
import StoreChain
import StoreChainDemoBackend
import StoreChainPipeline
import Testing

@Suite struct DemoTests {
    @Test func demoRunsToCompletion() async throws {
        let outcome = try await CommandRunner.run(["demo", "--bands", "40"])
        #expect(outcome.status == 0, "\(outcome.stderr)")
        #expect(outcome.stderr.isEmpty)
        #expect(outcome.stdout.contains("a music catalog of 40 bands"))
        #expect(outcome.stdout.contains("fetch Band where name BEGINSWITH[c] \"rue\""))
        #expect(outcome.stdout.contains("1   Rue Royale"))
        #expect(outcome.stdout.contains("8. Just the properties asked for"))
        #expect(outcome.stdout.contains("10. The same walk with albums and tracks prefetched: "))
        #expect(outcome.stdout.contains("tracks, 1 request(s)"))
        #expect(outcome.stdout.contains("11. Insert an album and save: Album/temp:"))
        #expect(outcome.stdout.contains("1. The same questions through both pipelines: identical answers"))
        #expect(!outcome.stdout.contains(" NO "), "every answer the same on v1 and v2")
        #expect(outcome.stdout.contains("2. A second run: 10 of 10 answers from the caches, 0 requests"))
        #expect(outcome.stdout.contains("answers at once (stale: true) and refreshes in the background (1 request)"))
        #expect(outcome.stdout.contains("all 40 answered; the backend sent"))
        // 300 faults in batches of at most 100: 3 requests, or a few more when a busy machine
        // starts the 100 faults of one batch more slowly than batching's max-delay (50 ms), which
        // then sends what has joined so far (a documented rule, not a defect).
        let batches = try #require(
            outcome.stdout.firstMatch(of: /(\d+) batch requests \(GET \/v2\/tracks\?ids=…\), not 300/))
        #expect((3...6).contains(try #require(Int(batches.1))), "\(batches.0)")
        #expect(outcome.stdout.contains("6. A GitHub-style API (v3"))
        #expect(outcome.stdout.contains("A new process over the same disk cache: 0 requests."))
        let totals = try #require(
            outcome.stdout.firstMatch(of: /(\d+) requests in all; the least any client could send is (\d+)/))
        let (spent, least) = (try #require(Int(totals.1)), try #require(Int(totals.2)))
        #expect(least > 0 && spent <= 2 * least, "v3: \(spent) requests, minimum \(least)")
        #expect(outcome.stdout.contains("the disk caches still answer 10 of 10 questions"))
        #expect(outcome.stdout.contains("Summary:"))
        // Offline writes: pending through a restart, read back once, sent once, a conflict merged.
        #expect(outcome.stdout.contains("the outbox holds 2 save(s), #1 insert (pending), #2 update (pending)."))
        #expect(outcome.stdout.contains("albums of Night Tide: First Light) and starts the replay."))
        #expect(outcome.stdout.contains("Replayed, 0 left. Permanent IDs: Album/temp:"))
        #expect(
            outcome.stdout.contains(
                "POST /v2/bands ×1, POST /v2/albums ×1, PATCH /v2/albums ×2 (repeats answered from Idempotency-Key: 0)")
        )
        #expect(outcome.stdout.contains("settled by merge: year 2031, price 9.5."))
    }

    @Test func embeddedModelMatchesTheExampleFile() async throws {
        let file = CommandRunner.packageRoot.appending(path: "Examples/Music/music.model.yml")
        #expect(try String(contentsOf: file, encoding: .utf8) == DemoCatalogModel.text)
    }

    @Test func catalogIsDeterministicAndFitsTheModel() async throws {
        let model = try ModelFile.parse(DemoCatalogModel.text)
        let records = DemoCatalog().records()
        #expect(records == DemoCatalog().records())
        #expect(records != DemoCatalog(seed: 1).records())
        let dataset = try RecordLoader(model: model).load(records)
        #expect(dataset.nodes(of: "Band").count == 200)
        #expect((1_300...1_700).contains(dataset.nodes(of: "Album").count))
        #expect((13_000...17_000).contains(dataset.nodes(of: "Track").count))
    }

    @Test func exampleDataLoads() async throws {
        let model = try ModelFile.load(
            contentsOf: CommandRunner.packageRoot.appending(path: "Examples/Music/music.model.yml"))
        let store = try JSONFileStore(
            contentsOf: CommandRunner.packageRoot.appending(path: "Examples/Music/music.json"), model: model)
        #expect(try store.fetch(FetchRequest(entity: "Album", resultType: .count)) == .count(12))
    }
}
