import Foundation
import HTTPTypes
import Hummingbird
import Logging
import NIOCore

/// A small colour-palette API, the way such sites page their lists: `GET /api/palettes?offset=
/// &limit=&sort=` answers `{"items": […], "total": N}` with `X-Total-Count` and
/// `Cache-Control: max-age=60`; `GET /api/palettes/{id}` answers one palette.
struct PalettesServer {
    struct Palette {
        let id: Int
        let title: String
        let colors: [String]
        let likes: Int
        let created: Int

        var json: String {
            let hex = colors.map { "\"\($0)\"" }.joined(separator: ", ")
            return
                #"{"id": \#(id), "title": "\#(title)", "colors": [\#(hex)], "likes": \#(likes), "created_at": \#(created)}"#
        }
    }

    let palettes: [Palette] = (1...300).map { id in
        let words = ["Dusk", "Harbour", "Citrus", "Moss", "Neon", "Clay", "Frost", "Ember", "Lagoon", "Paper"]
        let colors = (0..<5).map { index in String(format: "#%06X", (id * 2_654_435_761 + index * 40_503) & 0xFFFFFF) }
        return Palette(
            id: id, title: "\(words[id % words.count]) \(words[(id / 10) % words.count]) \(id)", colors: colors,
            likes: (id * 7_919) % 1_000, created: 1_700_000_000 + id * 86_400)
    }

    /// The list in the order asked; ties are broken by id, as StoreChain does.
    func sorted(by sort: String?) -> [Palette] {
        switch sort {
        case "-likes": palettes.sorted { ($0.likes, -$0.id) > ($1.likes, -$1.id) }
        case "likes": palettes.sorted { ($0.likes, $0.id) < ($1.likes, $1.id) }
        case "title": palettes.sorted { ($0.title, $0.id) < ($1.title, $1.id) }
        case "-created": palettes.sorted { ($0.created, -$0.id) > ($1.created, -$1.id) }
        default: palettes
        }
    }

    /// Starts listening on a free loopback port; returns the port and the running task.
    func start(counting requests: @escaping @Sendable () -> Void) async throws -> (Int, Task<Void, any Error>) {
        let router = Router()
        router.get("/api/palettes") { request, _ -> Response in
            requests()
            let parameters = request.uri.queryParameters
            let offset = max(0, parameters.get("offset", as: Int.self) ?? 0)
            let limit = min(100, max(1, parameters.get("limit", as: Int.self) ?? 20))
            let page = sorted(by: parameters.get("sort")).dropFirst(offset).prefix(limit)
            let body = #"{"items": [\#(page.map(\.json).joined(separator: ", "))], "total": \#(palettes.count)}"#
            return Self.json(body, extra: ["X-Total-Count": String(palettes.count), "Cache-Control": "max-age=60"])
        }
        router.get("/api/palettes/{id}") { _, context -> Response in
            requests()
            let id = try context.parameters.require("id", as: Int.self)
            guard let palette = palettes.first(where: { $0.id == id }) else {
                return Response(status: .notFound)
            }
            return Self.json(palette.json, extra: [:])
        }
        let (stream, continuation) = AsyncStream.makeStream(of: Int.self)
        var logger = Logger(label: "palettes")
        logger.logLevel = .critical
        let application = Application(
            router: router, configuration: .init(address: .hostname("127.0.0.1", port: 0)),
            onServerRunning: { channel in
                continuation.yield(channel.localAddress?.port ?? 0)
                continuation.finish()
            }, logger: logger)
        let task = Task { try await application.runService(gracefulShutdownSignals: []) }
        var ports = stream.makeAsyncIterator()
        return (await ports.next() ?? 0, task)
    }

    private static func json(_ text: String, extra: [String: String]) -> Response {
        var headers = HTTPFields()
        headers[.contentType] = "application/json"
        for (name, value) in extra {
            if let field = HTTPField.Name(name) { headers[field] = value }
        }
        return Response(status: .ok, headers: headers, body: .init(byteBuffer: ByteBuffer(string: text)))
    }
}
