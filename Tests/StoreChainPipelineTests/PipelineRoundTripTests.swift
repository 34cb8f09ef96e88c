import Foundation
import StoreChain
import StoreChainDemoBackend
import StoreChainHTTP
import StoreChainPipeline
import StoreChainTesting
import Testing

/// The demo's pipeline files against the same chains built in Swift.
@Suite(.serialized) struct PipelineRoundTripTests {
    /// The demo pipelines and model written to a fresh folder.
    static func demoFolder() throws -> URL {
        let folder = TemporaryFolder.make("storechain-demo")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        try DemoCatalogModel.text.write(
            to: folder.appending(path: "music.model.yml"), atomically: true, encoding: .utf8)
        try DemoPipelines.v1.write(to: folder.appending(path: "v1.pipeline.yml"), atomically: true, encoding: .utf8)
        try DemoPipelines.v2.write(to: folder.appending(path: "v2.pipeline.yml"), atomically: true, encoding: .utf8)
        try DemoPipelines.v3.write(to: folder.appending(path: "v3.pipeline.yml"), atomically: true, encoding: .utf8)
        return folder
    }

    static let examples = URL(filePath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appending(path: "Examples")

    @Test func theBandcampExampleFilesAreTheDemoPipelines() throws {
        let folder = Self.examples.appending(path: "Bandcamp")
        for (file, text) in [
            ("v1", DemoPipelines.v1), ("v2", DemoPipelines.v2), ("v3", DemoPipelines.v3),
            ("live", DemoPipelines.v2Live),
        ] {
            #expect(try String(contentsOf: folder.appending(path: "\(file).pipeline.yml"), encoding: .utf8) == text)
        }
        #expect(
            try String(contentsOf: folder.appending(path: "music.model.yml"), encoding: .utf8) == DemoCatalogModel.text)
    }

    @Test func everyExampleFileValidates() throws {
        let files = try FileManager.default.subpathsOfDirectory(atPath: Self.examples.path)
            .filter { $0.hasSuffix(".yml") && !$0.contains("/cache/") }
        #expect(files.count >= 5, "\(files)")
        var registry = HandlerRegistry.standard
        registry.register("fixed-bands", options: [String: [[String: String]]].self) { _, context in
            MemoryCache(model: context.model)
        }
        for file in files {
            let problems = FileValidator.problems(
                in: Self.examples.appending(path: file), registry: registry,
                environment: [
                    "STORECHAIN_DEMO_URL": "http://127.0.0.1:8080", "PALETTES_URL": "http://127.0.0.1:8081",
                    "STORECHAIN_POSTGRES_URL": "postgres://app:secret@127.0.0.1:5432/app",
                    "STORECHAIN_DRF_URL": "http://127.0.0.1:8000", "STORECHAIN_DATASETTE_URL": "http://127.0.0.1:8001",
                ])
            #if Postgres
                #expect(problems.isEmpty, "\(file): \(problems)")
            #else
                // Without the trait, what names the shared cache says how to turn it on, and
                // nothing else is wrong.
                let other = problems.filter { !$0.message.contains("needs StoreChain's 'Postgres' trait") }
                #expect(other.isEmpty, "\(file): \(problems)")
            #endif
        }
    }

    /// The reference names every built-in type and every option the fixtures use.
    @Test func theReferenceDocumentsEveryTypeAndOption() throws {
        let root = Self.examples.deletingLastPathComponent()
        let reference = try String(contentsOf: root.appending(path: "Docs/Pipelines.md"), encoding: .utf8)
        let registry = HandlerRegistry.standard
        for type in registry.handlerTypes + registry.terminalTypes {
            #expect(reference.contains("`\(type)`"), "\(type) is not documented")
        }
        let fixture = try String(
            contentsOf: root.appending(path: "Tests/StoreChainPipelineTests/Fixtures/every-handler.pipeline.yml"),
            encoding: .utf8)
        let options = fixture.matches(of: /[\s{,]([a-z][a-z-]+):/).map { String($0.output.1) }
        for option in Set(options) where !["model", "handlers", "terminal", "when", "kinds"].contains(option) {
            #expect(reference.contains("`\(option)`"), "option \(option) is not documented")
        }
    }

    @Test func theFileDescribesTheSameBackendAsTheSwiftOptions() throws {
        let folder = try Self.demoFolder()
        let base = URL(string: "http://127.0.0.1:8080")!
        let environment = ["STORECHAIN_DEMO_URL": "http://127.0.0.1:8080", "STORECHAIN_CACHE_DIR": folder.path]
        for (file, options) in [
            ("v1", DemoRemoteOptions.v1(baseURL: base)), ("v2", DemoRemoteOptions.v2(baseURL: base)),
            ("v3", DemoRemoteOptions.v3(baseURL: base)),
        ] {
            let pipeline = try Pipeline.load(
                contentsOf: folder.appending(path: "\(file).pipeline.yml"), environment: environment)
            let remote = try #require(pipeline.terminal as? RemoteResponder)
            var expected = options
            expected.timeoutSeconds = remote.options.timeoutSeconds
            #expect(remote.options == expected, "\(file)")
        }
    }

    @Test func aFileAndTheEquivalentSwiftChainGiveIdenticalResults() async throws {
        let backend = try DemoBackend(bands: 10)
        let port = try await backend.start()
        let base = URL(string: "http://127.0.0.1:\(port)")!
        do {
            let folder = try Self.demoFolder()
            let pipeline = try Pipeline.load(
                contentsOf: folder.appending(path: "v2.pipeline.yml"),
                environment: ["STORECHAIN_DEMO_URL": base.absoluteString, "STORECHAIN_CACHE_DIR": folder.path])
            let fromFile = pipeline.makeChain()
            let model = pipeline.model
            let inSwift = Chain(
                terminal: try RemoteResponder(model: model, options: DemoRemoteOptions.v2(baseURL: base))
            ) {
                MemoryCache(model: model)
                PaginationHandler(model: model, options: .init(pageSize: 50))
                RetryHandler()
                BatchingHandler(model: model, options: .init(entities: ["Track"]))
            }
            let requests = [
                FetchRequest(
                    entity: "Band", sortDescriptors: [FetchSortDescriptor("name")], fetchLimit: 5, fetchOffset: 3),
                FetchRequest(entity: "Band", predicate: try FetchPredicate("name BEGINSWITH[c] 'the'")),
                FetchRequest(entity: "Album", predicate: try FetchPredicate("year >= 2000"), fetchLimit: 7),
                FetchRequest(
                    entity: "Track", predicate: try FetchPredicate("album.id == 3"),
                    sortDescriptors: [FetchSortDescriptor("number")]),
                FetchRequest(entity: "Track", fetchLimit: 10, fetchOffset: 120, resultType: .objectIDs),
                FetchRequest(entity: "Album", resultType: .count),
            ]
            for request in requests {
                #expect(try await fromFile.fetch(request) == (try await inSwift.fetch(request)), "\(request)")
            }
            await fromFile.shutdown()
            await inSwift.shutdown()
        } catch {
            await backend.stop()
            throw error
        }
        await backend.stop()
    }
}
