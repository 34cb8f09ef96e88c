import Foundation
import StoreChain
import StoreChainDemoBackend
import StoreChainHTTP
import StoreChainPipeline
import StoreChainSQLite
import StoreChainTesting
import Testing

/// Where a pipeline's disk cache lives, and that it never answers with another backend's data.
@Suite struct CacheLocationTests {
    private static func folder(_ name: String) throws -> URL {
        let folder = TemporaryFolder.make("storechain-\(name)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        try DemoCatalogModel.text.write(
            to: folder.appending(path: "music.model.yml"), atomically: true, encoding: .utf8)
        return folder
    }

    /// The disk cache file a one-handler pipeline with `path` opens.
    private static func cacheFile(_ path: String, in folder: URL, environment: [String: String]) throws -> String {
        let text = """
            model: music.model.yml
            handlers:
              - disk-cache: { path: "\(path)" }
            terminal:
              in-memory: {}
            """
        let pipeline = try Pipeline.parse(text, source: "cache.yml", directory: folder, environment: environment)
        return try #require(pipeline.handlers.first as? DiskCache).storage.path
    }

    @Test func aRelativeCachePathIsInTheUsersCacheFolderNotBesideThePipeline() throws {
        let folder = try Self.folder("location")
        let home = folder.appending(path: "home").path
        let chosen = folder.appending(path: "chosen").path
        #if canImport(Darwin)
            let userCaches = "\(home)/Library/Caches/storechain"
        #else
            let userCaches = "\(home)/.cache/storechain"
            let xdg = folder.appending(path: "xdg").path
            #expect(
                try Self.cacheFile(
                    "cache/music.sqlite", in: folder, environment: ["HOME": home, "XDG_CACHE_HOME": xdg])
                    == "\(xdg)/storechain/cache/music.sqlite")
            #expect(
                try Self.cacheFile("c.sqlite", in: folder, environment: ["HOME": home, "XDG_CACHE_HOME": "relative"])
                    == "\(userCaches)/c.sqlite", "a relative XDG_CACHE_HOME is ignored, as the spec says")
        #endif
        #expect(
            try Self.cacheFile("cache/music.sqlite", in: folder, environment: ["HOME": home])
                == "\(userCaches)/cache/music.sqlite")
        #expect(FileManager.default.fileExists(atPath: "\(userCaches)/cache/music.sqlite"))
        #expect(!FileManager.default.fileExists(atPath: folder.appending(path: "cache").path))
        #expect(
            try Self.cacheFile(
                "cache/music.sqlite", in: folder, environment: ["HOME": home, "STORECHAIN_CACHE_DIR": chosen])
                == "\(chosen)/cache/music.sqlite")
        #expect(
            try Self.cacheFile("./cache/music.sqlite", in: folder, environment: ["HOME": home])
                == folder.appending(path: "cache/music.sqlite").path)
        #expect(try Self.cacheFile("~/c.sqlite", in: folder, environment: ["HOME": home]) == "\(home)/c.sqlite")
        let absolute = folder.appending(path: "abs/c.sqlite").path
        #expect(try Self.cacheFile(absolute, in: folder, environment: ["HOME": home]) == absolute)
    }

    /// The reported case: a second run against a new backend on another port was answered from
    /// the first backend's cache.
    @Test func aCacheFileNeverAnswersWithAnotherBackendsData() async throws {
        let folder = try Self.folder("namespace")
        try DemoPipelines.v2.write(to: folder.appending(path: "v2.pipeline.yml"), atomically: true, encoding: .utf8)
        let small = try DemoBackend(bands: 6)
        let large = try DemoBackend(bands: 9)
        let smallPort = try await small.start()
        let largePort = try await large.start()
        func bandCount(_ port: Int) async throws -> FetchResult {
            let pipeline = try Pipeline.load(
                contentsOf: folder.appending(path: "v2.pipeline.yml"),
                environment: ["STORECHAIN_DEMO_URL": "http://127.0.0.1:\(port)", "STORECHAIN_CACHE_DIR": folder.path])
            let chain = pipeline.makeChain()
            var request = try TestData.fetch("Band")
            request.resultType = .count
            let result = try await chain.fetch(request)
            await chain.shutdown()
            return result
        }
        do {
            #expect(try await bandCount(smallPort) == .count(6))
            let before = small.stats.requests
            #expect(try await bandCount(smallPort) == .count(6))
            #expect(small.stats.requests == before, "the same backend is answered from the disk cache")
            #expect(try await bandCount(largePort) == .count(9), "another backend's data is never an answer")
            #expect(try await bandCount(smallPort) == .count(6))
            #expect(small.stats.requests > before, "the file was taken over, so the small backend is asked again")
        } catch {
            await small.stop()
            await large.stop()
            throw error
        }
        await small.stop()
        await large.stop()
    }

    @Test func aRemoteBackendsNamespaceIsItsAddressAndMappingNotItsHeaders() throws {
        let model = try ModelFile.parse(DemoCatalogModel.text)
        func namespace(_ options: RemoteOptions) throws -> String? {
            try RemoteResponder(model: model, options: options).cacheNamespace
        }
        let base = try #require(URL(string: "http://user:secret@127.0.0.1:8080"))
        let options = DemoRemoteOptions.v2(baseURL: base)
        let reference = try #require(try namespace(options))
        #expect(reference.hasPrefix("remote http://127.0.0.1:8080/v2 #"), "\(reference)")
        #expect(!reference.contains("secret"))

        var withHeaders = options
        withHeaders.headers = ["X-Client": "app 2"]
        withHeaders.bearerToken = "rotated"
        #expect(try namespace(withHeaders) == reference, "a new token keeps the cache")
        var rebuilt = options
        rebuilt.entities = [:]
        for name in options.entities.keys.sorted().reversed() { rebuilt.entities[name] = options.entities[name] }
        #expect(try namespace(rebuilt) == reference, "the same mapping built in another order")

        let otherHost = try #require(URL(string: "http://127.0.0.2:8080"))
        #expect(try namespace(DemoRemoteOptions.v2(baseURL: otherHost)) != reference)
        let otherPort = try #require(URL(string: "http://127.0.0.1:8081"))
        #expect(try namespace(DemoRemoteOptions.v2(baseURL: otherPort)) != reference)
        var remapped = options
        remapped.entities["Band"]?.attributes["name"] = "title"
        #expect(try namespace(remapped) != reference, "another mapping gives other data")
        #expect(Fingerprint.hex(of: "") == "07cc7607b4949e25", "the digest is the same in every process and release")
    }
}
