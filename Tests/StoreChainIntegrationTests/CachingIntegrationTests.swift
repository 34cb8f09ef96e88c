import Foundation
import StoreChain
import StoreChainDemoBackend
import StoreChainHTTP
import StoreChainPipeline
import StoreChainSQLite
import StoreChainTesting
import Testing

/// The caches in front of the real demo backend over HTTP.
@Suite(.serialized) struct CachingIntegrationTests {
    let backendTests = DemoBackendTests()

    private func temporaryFile() -> String {
        TemporaryFolder.make("storechain").appending(path: "cache.sqlite").path
    }

    @Test func theDumpOnlyBackendBehindTheDiskCacheAnswersPreciseQueriesWithOneRequest() async throws {
        try await backendTests.withBackend { backend, base in
            let clock = ManualClock()
            let v1 = try RemoteResponder(model: backend.model, options: DemoRemoteOptions.v1(baseURL: base))
            let disk = DiskCache(
                model: backend.model, path: temporaryFile(),
                options: CacheOptions(expiry: CacheExpiry(defaultTTL: .seconds(600))))
            let chain = Chain(handlers: [disk], terminal: v1, clock: clock)
            var generator = MusicRequestGenerator(seed: 11)
            backend.resetStats()
            for _ in 0..<40 {
                let request = try generator.request()
                let expected = backendTests.comparable(try backend.store.fetch(request))
                #expect(backendTests.comparable(try await chain.fetch(request)) == expected, "\(request)")
            }
            #expect(backend.stats.requests == 1, "\(backend.stats.requestsByRoute)")
            await clock.advance(by: .seconds(601))
            let request = try generator.request()
            #expect(
                backendTests.comparable(try await chain.fetch(request))
                    == backendTests.comparable(try backend.store.fetch(request)))
            #expect(backend.stats.requests == 2, "expired: one more dump")
            await chain.shutdown()
        }
    }

    @Test func memoryAndDiskInFrontOfV2AgreeWithTheStoreAndSaveRequests() async throws {
        try await backendTests.withBackend { backend, base in
            let v2 = try RemoteResponder(model: backend.model, options: DemoRemoteOptions.v2(baseURL: base))
            let chain = Chain(terminal: v2) {
                MemoryCache(model: backend.model)
                DiskCache(model: backend.model, path: temporaryFile())
            }
            var generator = MusicRequestGenerator(seed: 5)
            let requests = try (0..<25).map { _ in try generator.request() }
            for request in requests {
                #expect(
                    backendTests.comparable(try await chain.fetch(request))
                        == backendTests.comparable(try backend.store.fetch(request)), "\(request)")
            }
            let firstPass = backend.stats.requests
            for request in requests {
                let response = try await chain.send(.fetch(request))
                #expect(response.info.origin == .memory, "\(request)")
            }
            #expect(backend.stats.requests == firstPass, "the second pass is answered from memory")
            await chain.shutdown()
        }
    }

    @Test func cacheOnlyNeverReachesTheNetwork() async throws {
        try await backendTests.withBackend { backend, base in
            let v2 = try RemoteResponder(model: backend.model, options: DemoRemoteOptions.v2(baseURL: base))
            let chain = Chain(handlers: [MemoryCache(model: backend.model)], terminal: v2)
            let request = try TestData.fetch("Band", where: "name BEGINSWITH[c] 'rue'")
            let error = await #expect(throws: StoreChainError.self) {
                try await chain.send(.fetch(request), context: chain.makeContext(cachePolicy: .cacheOnly))
            }
            #expect(error?.code == .notCached)
            var offline = request
            offline.cachePolicy = .cacheOnly
            let fromRequest = await #expect(throws: StoreChainError.self, "the request's own policy too") {
                try await chain.fetch(offline)
            }
            #expect(fromRequest?.code == .notCached)
            #expect(backend.stats.requests == 0)
            _ = try await chain.fetch(request)
            let cached = try await chain.send(.fetch(request), context: chain.makeContext(cachePolicy: .cacheOnly))
            #expect(cached.info.origin == .memory)
            await chain.shutdown()
        }
    }
}

/// How compactly the disk cache stores the demo catalog (reported, and checked).
@Suite struct DiskCacheCompressionTests {
    @Test func theDemoCatalogIsStoredCompactly() async throws {
        let model = try ModelFile.parse(DemoCatalogModel.text, source: "demo.model.yml")
        let dataset = try RecordLoader(model: model).load(DemoCatalog(bands: 20).records())
        var write = CacheWrite()
        write.nodes = model.entities.flatMap { dataset.nodes(of: $0.name) }.map { node in
            var node = node
            node.freshness = Freshness(expiresAt: .distantFuture)
            return node
        }
        var sizes: [Bool: SQLiteCacheStorage.Statistics] = [:]
        for compresses in [false, true] {
            let path = TemporaryFolder.make("storechain").appending(path: "c.sqlite").path
            let storage = SQLiteCacheStorage(path: path, model: model, compresses: compresses)
            _ = try await storage.write(write)
            sizes[compresses] = try await storage.statistics()
        }
        let plain = try #require(sizes[false])
        let compressed = try #require(sizes[true])
        print(
            "disk cache, demo catalog of \(write.nodes.count) objects: payloads \(plain.payloadBytes) → "
                + "\(compressed.payloadBytes) bytes compressed (\(String(format: "%.2f", Double(compressed.payloadBytes) / Double(plain.payloadBytes)))×), "
                + "file \(plain.storedBytes) → \(compressed.storedBytes) bytes")
        // Whole nodes (IDs and relationships too) in less than the JSON of their attributes alone.
        let attributesJSON = try write.nodes.reduce(0) { $0 + (try JSONEncoder().encode($1.attributes)).count }
        #expect(plain.payloadBytes < attributesJSON, "\(plain.payloadBytes) bytes vs \(attributesJSON)")
        #expect(compressed.payloadBytes <= plain.payloadBytes, "compressing never grows a payload")
    }
}
