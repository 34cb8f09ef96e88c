import Foundation
import StoreChain
import StoreChainDemoBackend
import StoreChainHTTP
import StoreChainSQLite
import StoreChainTesting
import Testing

/// Security basics: a bearer token reaches the backend and nowhere else — not the log (at
/// trace level), not an error, not the cache file.
@Suite struct SecretsTests {
    @Test func theTokenNeverAppearsInLogsErrorsOrTheCacheFile() async throws {
        let token = "sk-live-\(UUID().uuidString)"
        let backend = try DemoBackend(bands: 3)
        let port = try await backend.start()
        let base = URL(string: "http://127.0.0.1:\(port)")!
        var options = DemoRemoteOptions.v2(baseURL: base)
        options.bearerToken = token
        options.entities["Album"]?.fetch = [RemoteEndpoint("GET /broken", records: "data")]
        let directory = TemporaryFolder.make("storechain-secrets")
        let cachePath = directory.appending(path: "cache.sqlite").path
        let log = CapturedLog()
        let remote = try RemoteResponder(model: backend.model, options: options)
        let chain = Chain(terminal: remote, logger: log.logger()) {
            LoggingHandler(level: .trace)
            DiskCache(model: backend.model, path: cachePath, logger: log.logger())
        }
        _ = try await chain.fetch(FetchRequest(entity: "Band"))
        _ = try await chain.send(.objectFault(ObjectID(entity: "Track", key: 1)))
        let error = await #expect(throws: StoreChainError.self) {
            try await chain.fetch(FetchRequest(entity: "Album"))
        }
        await chain.shutdown()
        await backend.stop()

        #expect(!log.text.isEmpty && !log.text.contains(token), "the log holds the token")
        let described = [String(describing: error), error?.localizedDescription ?? "", "\(error?.location as Any)"]
        #expect(!described.joined().contains(token), "an error holds the token")
        var files = Data()
        for name in try FileManager.default.contentsOfDirectory(atPath: directory.path) {
            files += try Data(contentsOf: directory.appending(path: name))
        }
        #expect(!files.isEmpty && files.range(of: Data(token.utf8)) == nil, "the cache files hold the token")
    }
}
