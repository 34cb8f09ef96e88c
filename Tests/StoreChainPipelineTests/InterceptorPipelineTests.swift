import Foundation
import StoreChain
import StoreChainDemoBackend
import StoreChainHTTP
import StoreChainPipeline
import StoreChainTesting
import Testing

/// `interceptors:` under the remote terminal: built-in and registered types, end to end against
/// the demo backend, and errors at their lines.
@Suite struct InterceptorPipelineTests {
    /// Records the headers of every exchange it sees.
    final class Recorder: HTTPInterceptor {
        let seen = Locked<[[String: String]]>([])

        func intercept(
            _ request: TransportRequest, context: RequestContext,
            next: (TransportRequest) async throws -> TransportResponse
        ) async throws -> TransportResponse {
            seen.withLock { $0.append(request.headers) }
            return try await next(request)
        }
    }

    struct NoOptions: Decodable, Sendable {}

    static func folder() throws -> URL {
        let folder = TemporaryFolder.make("storechain-interceptors")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        try DemoCatalogModel.text.write(
            to: folder.appending(path: "music.model.yml"), atomically: true, encoding: .utf8)
        return folder
    }

    static func pipeline(interceptors: String) -> String {
        DemoPipelines.v1.replacingOccurrences(
            of: "    base-url: ${STORECHAIN_DEMO_URL}\n",
            with: "    base-url: ${STORECHAIN_DEMO_URL}\n    interceptors:\n" + interceptors)
    }

    @Test func builtInAndRegisteredInterceptorsSeeEveryExchange() async throws {
        let folder = try Self.folder()
        try "music-token".write(to: folder.appending(path: "token"), atomically: true, encoding: .utf8)
        let recorder = Recorder()
        var registry = HandlerRegistry.standard
        registry.registerInterceptor("recorder", options: NoOptions.self) { _, _ in recorder }
        #expect(registry.interceptorTypes == ["recorder", "request-id", "token-file"])
        let backend = try DemoBackend(bands: 5)
        let port = try await backend.start()
        do {
            let text = Self.pipeline(
                interceptors: """
                        - request-id: { header: X-Trace }
                        - token-file: { path: ./token, prefix: "Token " }
                        - recorder

                    """)
            let pipeline = try Pipeline.parse(
                text, source: "interceptors.yml", directory: folder, registry: registry,
                environment: ["STORECHAIN_DEMO_URL": "http://127.0.0.1:\(port)", "STORECHAIN_CACHE_DIR": folder.path])
            let remote = try #require(pipeline.terminal as? RemoteResponder)
            #expect(remote.interceptors.count == 3)
            let chain = pipeline.makeChain()
            var request = try TestData.fetch("Band")
            request.resultType = .count
            #expect(try await chain.fetch(request) == .count(5))
            await chain.shutdown()
            let headers = recorder.seen.withLock { $0 }
            #expect(headers.count == backend.stats.requests && !headers.isEmpty)
            #expect(headers.allSatisfy { $0["Authorization"] == "Token music-token" })
            #expect(headers.allSatisfy { UUID(uuidString: $0["X-Trace"] ?? "") != nil })
        } catch {
            await backend.stop()
            throw error
        }
        await backend.stop()
    }

    @Test func badInterceptorsAreReportedAtTheirLines() throws {
        let text = Self.pipeline(
            interceptors: """
                    - request-idd
                    - token-file: { header: X-Token }

                """)
        let failure = #expect(throws: ValidationFailure.self) {
            try Pipeline.parse(
                text, source: "bad.yml", directory: try Self.folder(),
                environment: ["STORECHAIN_DEMO_URL": "http://127.0.0.1:9"])
        }
        let errors = failure?.errors ?? []
        #expect(errors.count == 2, "\(errors)")
        #expect(errors.first?.message == "unknown interceptor type 'request-idd'")
        #expect(errors.first?.suggestion?.contains("did you mean 'request-id'") == true, "\(errors)")
        #expect(errors.first?.location?.line == 12)
        #expect(errors.last?.message.contains("'path' is missing") == true, "\(errors)")
        #expect(errors.last?.location?.line == 13)
    }
}
