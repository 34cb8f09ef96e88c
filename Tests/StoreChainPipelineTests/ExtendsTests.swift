import Foundation
import StoreChain
import StoreChainDemoBackend
import StoreChainHTTP
import StoreChainPipeline
import StoreChainTesting
import Testing

/// `extends:` — a pipeline file that takes another's model, terminal and handlers unless it
/// gives its own, so adding a handler does not mean copying the entity mappings.
@Suite struct ExtendsTests {
    static func folder(_ files: [String: String]) throws -> URL {
        let folder = TemporaryFolder.make("storechain-extends")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        try DemoCatalogModel.text.write(
            to: folder.appending(path: "music.model.yml"), atomically: true, encoding: .utf8)
        for (name, text) in files {
            try text.write(to: folder.appending(path: name), atomically: true, encoding: .utf8)
        }
        return folder
    }

    @Test func aFileTakesTheTerminalAndModelOfTheOneItExtends() async throws {
        let folder = try Self.folder([
            "v2.pipeline.yml": DemoPipelines.v2,
            "app.pipeline.yml": """
            extends: v2.pipeline.yml
            handlers:
              - logging: { level: info }
              - memory-cache: { ttl: 1m }
            """,
            "same.pipeline.yml": "extends: ./v2.pipeline.yml\n",
        ])
        let backend = try DemoBackend(bands: 7)
        let port = try await backend.start()
        let environment = ["STORECHAIN_DEMO_URL": "http://127.0.0.1:\(port)", "STORECHAIN_CACHE_DIR": folder.path]
        do {
            let app = try Pipeline.load(
                contentsOf: folder.appending(path: "app.pipeline.yml"), environment: environment)
            let base = try Pipeline.load(
                contentsOf: folder.appending(path: "v2.pipeline.yml"), environment: environment)
            #expect(app.stages.map(\.type) == ["logging", "memory-cache"])
            #expect(app.terminalType == "remote" && app.model == base.model)
            #expect(app.terminal.cacheNamespace == base.terminal.cacheNamespace)
            let same = try Pipeline.load(
                contentsOf: folder.appending(path: "same.pipeline.yml"), environment: environment)
            #expect(same.stages.map(\.type) == base.stages.map(\.type))
            let chain = app.makeChain()
            var request = try TestData.fetch("Band")
            request.resultType = .count
            #expect(try await chain.fetch(request) == .count(7))
            await chain.shutdown()
        } catch {
            await backend.stop()
            throw error
        }
        await backend.stop()
    }

    @Test func errorsInTheExtendedFileNameBothFiles() throws {
        let folder = try Self.folder([
            "base.pipeline.yml": """
            model: music.model.yml
            handlers:
              - memory-cache: { max-object: 5 }
            terminal:
              in-memory: {}
            """,
            "app.pipeline.yml": "# the app's pipeline\nextends: base.pipeline.yml\n",
        ])
        let errors = Pipeline.validate(contentsOf: folder.appending(path: "app.pipeline.yml"))
        #expect(errors.count == 1, "\(errors)")
        let error = try #require(errors.first)
        let base = folder.appending(path: "base.pipeline.yml").path
        #expect(error.location?.file == base && error.location?.line == 3, "\(error)")
        #expect(
            error.message
                == "unknown option 'max-object' (in \(base), which \(folder.appending(path: "app.pipeline.yml").path):2 extends)"
        )
    }

    @Test func aLoopOrAMissingFileIsAnErrorAtTheExtendsLine() throws {
        let folder = try Self.folder([
            "a.pipeline.yml": "extends: b.pipeline.yml\n",
            "b.pipeline.yml": "model: music.model.yml\nextends: a.pipeline.yml\n",
            "c.pipeline.yml": "extends: nowhere.pipeline.yml\n",
        ])
        let loop = Pipeline.validate(contentsOf: folder.appending(path: "a.pipeline.yml"))
        #expect(
            loop.contains {
                $0.message.contains("extends this file again (a.pipeline.yml → b.pipeline.yml → a.pipeline.yml)")
            }, "\(loop)")
        let missing = Pipeline.validate(contentsOf: folder.appending(path: "c.pipeline.yml"))
        #expect(missing.first?.location?.line == 1, "\(missing)")
        #expect(
            missing.first?.message.hasPrefix("the extended pipeline file 'nowhere.pipeline.yml' cannot be read")
                == true,
            "\(missing)")
    }

    @Test func withoutAModelTheHandlersAndTerminalAreStillChecked() throws {
        let folder = try Self.folder([
            "base.pipeline.yml": "model: missing.model.yml\nterminal:\n  in-memry: {}\n",
            "app.pipeline.yml": "extends: base.pipeline.yml\nhandlers:\n  - memory-cash\n",
        ])
        let errors = Pipeline.validate(contentsOf: folder.appending(path: "app.pipeline.yml"))
        #expect(
            errors.contains { $0.message.hasPrefix("the model file 'missing.model.yml' does not exist") }, "\(errors)")
        #expect(errors.contains { $0.message == "unknown handler type 'memory-cash'" }, "\(errors)")
        #expect(errors.contains { $0.message.hasPrefix("unknown terminal type 'in-memry' (in ") }, "\(errors)")
    }
}
