import Foundation
import HTTPTypes
import Hummingbird
import NIOCore
import StoreChain

extension Inspector {
    /// The page, its API (`/api/…`, JSON) and its live stream of requests (`/api/live`).
    func makeRouter() -> Router<BasicRequestContext> {
        let router = Router()
        for (path, file, type) in [
            ("/", "index.html", "text/html; charset=utf-8"), ("/inspector.js", "inspector.js", "text/javascript"),
            ("/inspector.css", "inspector.css", "text/css"),
        ] {
            router.get(RouterPath(path)) { _, _ in try Self.resource(file, type: type) }
        }
        router.get("/favicon.ico") { _, _ in Response(status: .noContent) }
        router.get("/api/session") { _, _ in Self.json(Session(token: self.token)) }
        router.get("/api/pipeline") { _, _ in Self.json(self.pipelineView()) }
        router.get("/api/caches") { _, _ in Self.json(await self.cachesView()) }
        router.get("/api/requests") { _, _ in Self.json(self.recentRequests()) }
        router.get("/api/outbox") { _, _ in Self.json(await self.outboxesView()) }
        router.get("/api/rate-limits") { _, _ in Self.json(self.rateLimitsView()) }
        router.get("/api/live") { _, _ in self.liveStream() }
        router.post("/api/query") { request, _ in
            try await self.authorized(request) { body in
                Self.json(await self.run(try JSONDecoder().decode(QueryInput.self, from: body)))
            }
        }
        router.post("/api/caches/clear") { request, _ in
            try await self.authorized(request) { body in
                let asked = try JSONDecoder().decode(ClearInput.self, from: body)
                return Self.json(await self.clearCaches(named: asked.cache))
            }
        }
        router.post("/api/caches/forget") { request, _ in
            try await self.authorized(request) { body in
                Self.json(await self.forget(try JSONDecoder().decode(ForgetInput.self, from: body)))
            }
        }
        router.post("/api/outbox/retry") { request, _ in
            try await self.authorized(request) { body in
                Self.json(await self.retryOutboxEntry(try JSONDecoder().decode(OutboxInput.self, from: body)))
            }
        }
        router.post("/api/outbox/discard") { request, _ in
            try await self.authorized(request) { body in
                Self.json(await self.discardOutboxEntry(try JSONDecoder().decode(OutboxInput.self, from: body)))
            }
        }
        return router
    }

    /// Runs `action` with the request's body when it carries this run's token; else 403.
    private func authorized(_ request: Request, _ action: (Data) async throws -> Response) async throws -> Response {
        let given = HTTPField.Name("X-StoreChain-Token").flatMap { request.headers[$0] }
        guard given == token else {
            return Self.json(
                ActionError(
                    error: "this action needs the inspector's token in X-StoreChain-Token",
                    suggestion: "use the page the inspector serves; it reads the token from /api/session"),
                status: .forbidden)
        }
        let body = try await request.body.collect(upTo: 1 << 20)
        do {
            return try await action(Data(buffer: body))
        } catch let error as DecodingError {
            return Self.json(
                ActionError(error: "the request's JSON is not what this action takes: \(error)"), status: .badRequest)
        }
    }

    struct Session: Codable {
        var token: String
    }

    struct ActionError: Codable {
        var error: String
        var suggestion: String?
    }

    static func json(_ value: some Encodable, status: HTTPResponse.Status = .ok) -> Response {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        let data = (try? encoder.encode(value)) ?? Data(#"{"error": "the answer could not be encoded"}"#.utf8)
        return Response(
            status: status, headers: [.contentType: "application/json", .cacheControl: "no-store"],
            body: ResponseBody(byteBuffer: ByteBuffer(bytes: data)))
    }

    /// A file shipped with the module.
    private static func resource(_ name: String, type: String) throws -> Response {
        guard let url = Bundle.module.url(forResource: name, withExtension: nil, subdirectory: "Resources"),
            let data = try? Data(contentsOf: url)
        else {
            throw HTTPError(.notFound, message: "the inspector's \(name) is missing from its resources")
        }
        return Response(
            status: .ok, headers: [.contentType: type, .cacheControl: "no-store"],
            body: ResponseBody(byteBuffer: ByteBuffer(bytes: data)))
    }
}
