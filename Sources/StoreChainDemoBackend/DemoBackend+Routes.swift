import Foundation
import HTTPTypes
import Hummingbird
import NIOCore
@_spi(Internals) import StoreChain

/// A JSON answer and, for paged lists, the URLs of the next and last pages and the number of
/// records.
struct DemoReply {
    var json: JSONValue
    var next: String?
    var last: String?
    var total: Int?

    init(_ json: JSONValue, next: String? = nil, last: String? = nil, total: Int? = nil) {
        self.json = json
        self.next = next
        self.last = last
        self.total = total
    }
}

extension DemoBackend {
    func makeRouter() -> Router<BasicRequestContext> {
        let router = Router()
        router.get("/v1/catalog") { request, _ in
            try await self.respond(request, route: "/v1/catalog") { _ in DemoReply(self.v1Catalog()) }
        }

        router.get("/v2/bands") { request, _ in
            try await self.respond(request, route: "/v2/bands") { request in
                try self.pagedList("Band", request, sortable: true)
            }
        }
        router.get("/v2/bands/search") { request, _ in
            try await self.respond(request, route: "/v2/bands/search") { request in
                let name = request.uri.queryParameters.get("name") ?? ""
                let nodes = try self.fetch("Band", FetchPredicate("name BEGINSWITH[c] %@", name), sort: "name")
                return DemoReply(.object(["data": .array(nodes.map(DemoRepresentation.v2))]))
            }
        }
        router.get("/v2/bands/{id}") { request, context in
            try await self.respond(request, route: "/v2/bands/{id}") { _ in try self.one("Band", context) }
        }
        router.get("/v2/bands/{id}/albums") { request, context in
            try await self.respond(request, route: "/v2/bands/{id}/albums") { _ in
                let id = try context.parameters.require("id", as: Int.self)
                let nodes = try self.fetch("Album", FetchPredicate("band.id == %d", id), sort: "year")
                return DemoReply(.object(["data": .array(nodes.map(DemoRepresentation.v2))]))
            }
        }
        router.get("/v2/albums") { request, _ in
            try await self.respond(request, route: "/v2/albums") { request in try self.cursorList(request) }
        }
        router.get("/v2/albums/{id}") { request, context in
            try await self.respond(request, route: "/v2/albums/{id}") { _ in try self.one("Album", context) }
        }
        router.get("/v2/tracks") { request, _ in
            try await self.respond(request, route: "/v2/tracks") { request in try self.tracks(request) }
        }
        router.get("/v2/tracks/{id}") { request, context in
            try await self.respond(request, route: "/v2/tracks/{id}") { _ in try self.one("Track", context) }
        }
        router.get("/v2/broken") { request, _ in
            _ = self.admit("/v2/broken")
            return self.raw(#"{"data": [{"id": 1, "attributes": {"name": "unterminated"#, status: .ok)
        }
        router.get("/v2/gzipped") { _, _ in
            // A fixed gzip body, for checking that clients decompress.
            _ = self.admit("/v2/gzipped")
            let gzip = Data(base64Encoded: Self.gzippedBand) ?? Data()
            var headers = HTTPFields()
            headers[.contentType] = "application/json"
            headers[.contentEncoding] = "gzip"
            return Response(status: .ok, headers: headers, body: .init(byteBuffer: ByteBuffer(bytes: gzip)))
        }
        for (path, entity) in [("bands", "Band"), ("albums", "Album"), ("tracks", "Track")] {
            router.post("/v2/\(path)") { request, context in
                try await self.write(request, context, route: "POST /v2/\(path)") { body in
                    try self.create(entity, body)
                }
            }
            // `If-Match: "3"` names the version a change or delete is based on: 412 when it is not
            // the current one.
            router.patch("/v2/\(path)/{id}") { request, context in
                try await self.write(request, context, route: "PATCH /v2/\(path)") { body in
                    try self.update(
                        entity, id: context.parameters.require("id", as: Int.self), body,
                        basedOn: Self.basedOn(request))
                }
            }
            router.delete("/v2/\(path)/{id}") { request, context in
                try await self.write(request, context, route: "DELETE /v2/\(path)") { _ in
                    try self.remove(
                        entity, id: context.parameters.require("id", as: Int.self), basedOn: Self.basedOn(request))
                }
            }
        }
        router.get("/v2/changes") { request, _ in try await self.changes(request, route: "/v2/changes") }
        router.get("/v2/events") { request, _ in try await self.events(request, route: "/v2/events") }
        // v3 writes records as v2 does, so its stream is the same.
        router.get("/v3/events") { request, _ in try await self.events(request, route: "/v3/events") }
        addGitHubStyleRoutes(to: router)
        addMisbehavingRoutes(to: router)
        return router
    }

    /// `{"data": [{"id": 1, "attributes": {"name": "Gzipped Band"}}]}`, gzip-compressed.
    static let gzippedBand =
        "H4sIAAAAAAACA6tWSkksSVSyUoiuVspMAdKGOgpKiSUlRZlJpSWpxUCBaqW8xNxUIEPJvSqzoCA1RcEpMS9FqbY2thYAkv1pmT0AAAA="

    /// A JSON answer with the quirks applied: latency, 429, 500, ETag / 304, Cache-Control.
    func respond(_ request: Request, route: String, _ body: (Request) throws -> DemoReply?) async throws
        -> Response
    {
        let quirks = self.quirks.withLock { $0 }
        if quirks.latency > .zero { try await Task.sleep(for: quirks.latency) }
        if let (status, retryAfter) = admit(route) {
            var headers = HTTPFields()
            if let retryAfter { headers[.retryAfter] = String(retryAfter) }
            return raw(
                #"{"error": "\#(status == 429 ? "rate limited" : "internal error")"}"#, status: .init(code: status),
                headers: headers)
        }
        guard let reply = try body(request) else {
            return raw(#"{"error": "not found"}"#, status: .notFound)
        }
        let text = reply.json.description
        var headers = HTTPFields()
        if let maxAge = quirks.maxAgeSeconds { headers[.cacheControl] = "max-age=\(maxAge)" }
        if quirks.etags {
            // A stable hash, so validators stay valid across server restarts.
            let etag = "\"\(String(Fingerprint.digest(of: text), radix: 16))\""
            headers[.eTag] = etag
            if request.headers[values: .ifNoneMatch].contains(etag) {
                counters.withLock { $0.notModified += 1 }
                return Response(status: .notModified, headers: headers)
            }
        }
        let links = [reply.next.map { "<\($0)>; rel=\"next\"" }, reply.last.map { "<\($0)>; rel=\"last\"" }]
            .compactMap { $0 }
        if !links.isEmpty, let link = HTTPField.Name("Link") { headers[link] = links.joined(separator: ", ") }
        if let total = reply.total, let name = HTTPField.Name("X-Total-Count") { headers[name] = String(total) }
        return raw(text, status: .ok, headers: headers)
    }

    /// Counts a write or a poll for changes and, when a quirk refuses it, the 429 or 500 to send.
    func busyAnswer(_ route: String) -> Response? {
        guard let (status, retryAfter) = admit(route) else { return nil }
        var headers = HTTPFields()
        if let retryAfter { headers[.retryAfter] = String(retryAfter) }
        return raw(#"{"error": "busy"}"#, status: .init(code: status), headers: headers)
    }

    func raw(_ text: String, status: HTTPResponse.Status, headers: HTTPFields = HTTPFields()) -> Response {
        var headers = headers
        headers[.contentType] = "application/json"
        countBytes(text.utf8.count)
        return Response(status: status, headers: headers, body: .init(byteBuffer: ByteBuffer(string: text)))
    }

    private func write(
        _ request: Request, _ context: BasicRequestContext, route: String, _ change: (JSONValue) throws -> JSONValue?
    ) async throws -> Response {
        if let refusal = busyAnswer(route) { return refusal }
        let buffer = try await request.body.collect(upTo: 1 << 20)
        let bytes = Array(buffer.readableBytesView)
        let body: JSONValue
        do {
            body = bytes.isEmpty ? .object([:]) : try JSONParser().parse(bytes)
        } catch {
            return raw(JSONValue.object(["error": .string(error.description)]).description, status: .badRequest)
        }
        let key = HTTPField.Name("Idempotency-Key").flatMap { request.headers[$0] }
        let answer = try idempotentAnswers.withLock { answers in
            // A repeat of a write already made gets the first answer, and changes nothing.
            if let key, let first = answers[key] {
                counters.withLock { $0.repeatedWrites += 1 }
                return first
            }
            let answer = try apply(change, body, created: request.method == .post)
            // A precondition that failed changed nothing: a repeat may succeed.
            if let key, answer.status != 412 { answers[key] = answer }
            return answer
        }
        return raw(answer.text, status: .init(code: answer.status))
    }

    private func apply(_ change: (JSONValue) throws -> JSONValue?, _ body: JSONValue, created: Bool) throws
        -> WriteAnswer
    {
        do {
            guard let result = try change(body) else {
                return WriteAnswer(status: 404, text: #"{"error": "not found"}"#)
            }
            return WriteAnswer(status: created ? 201 : 200, text: result.description)
        } catch let error as StoreChainError {
            let status = error.code == .conflict ? 412 : 422
            return WriteAnswer(
                status: status, text: JSONValue.object(["error": .string(error.description)]).description)
        }
    }

    // MARK: Data

    func fetch(
        _ entity: String, _ predicate: FetchPredicate? = nil, sort: String = "id", limit: Int? = nil, offset: Int = 0
    )
        throws -> [Node]
    {
        let request = FetchRequest(
            entity: entity, predicate: predicate, sortDescriptors: [try FetchSortDescriptor(parsing: sort)],
            fetchLimit: limit, fetchOffset: offset)
        guard case .objects(let nodes) = try store.fetch(request) else { return [] }
        return nodes
    }

    private func v1Catalog() -> JSONValue {
        let snapshot = store.snapshot
        func all(_ entity: String) -> JSONValue {
            .array(
                snapshot.nodes(of: entity).sorted { ($0.id.key?.description ?? "") < ($1.id.key?.description ?? "") }
                    .map(DemoRepresentation.v1))
        }
        return .object(["catalog": .object(["bands": all("Band"), "albums": all("Album"), "tracks": all("Track")])])
    }

    private func one(_ entity: String, _ context: BasicRequestContext) throws -> DemoReply? {
        let id = try context.parameters.require("id", as: Int.self)
        return store.node(for: ObjectID(entity: entity, key: .integer(id))).map { DemoReply(DemoRepresentation.v2($0)) }
    }

    /// Page-number paging with a `Link` header for the next page; `sort` takes name, -name,
    /// founded, -founded.
    private func pagedList(_ entity: String, _ request: Request, sortable: Bool) throws -> DemoReply {
        let page = max(1, request.uri.queryParameters.get("page", as: Int.self) ?? 1)
        let perPage = min(100, max(1, request.uri.queryParameters.get("per_page", as: Int.self) ?? 25))
        var sort = "id"
        if sortable, let requested = request.uri.queryParameters.get("sort"),
            ["name", "-name", "founded", "-founded"].contains(requested)
        {
            sort = requested
        }
        let nodes = try fetch(entity, sort: sort, limit: perPage + 1, offset: (page - 1) * perPage)
        var next: String?
        if nodes.count > perPage {
            next = request.uri.path + "?page=\(page + 1)&per_page=\(perPage)" + (sort == "id" ? "" : "&sort=\(sort)")
        }
        return DemoReply(
            .object(["data": .array(nodes.prefix(perPage).map(DemoRepresentation.v2))]), next: next,
            total: store.snapshot.nodes(of: entity).count)
    }

    /// Opaque-cursor paging (the cursor is base64 of an offset); filters band_id, year_from,
    /// year_to.
    private func cursorList(_ request: Request) throws -> DemoReply {
        let parameters = request.uri.queryParameters
        let limit = min(100, max(1, parameters.get("limit", as: Int.self) ?? 25))
        var offset = 0
        if let cursor = parameters.get("cursor"), !cursor.isEmpty {
            guard let data = Data(base64Encoded: cursor), let decoded = Int(String(decoding: data, as: UTF8.self))
            else {
                return DemoReply(.object(["error": .string("bad cursor"), "items": .array([])]))
            }
            offset = decoded
        }
        var conditions: [String] = []
        var arguments: [any PredicateArgumentConvertible] = []
        if let band = parameters.get("band_id", as: Int.self) {
            conditions.append("band.id == %d")
            arguments.append(band)
        }
        if let from = parameters.get("year_from", as: Int.self) {
            conditions.append("year >= %d")
            arguments.append(from)
        }
        if let to = parameters.get("year_to", as: Int.self) {
            conditions.append("year <= %d")
            arguments.append(to)
        }
        let predicate =
            conditions.isEmpty
            ? nil
            : try FetchPredicate(
                format: conditions.joined(separator: " AND "), arguments: arguments.map(\.predicateArgument))
        let nodes = try fetch("Album", predicate, limit: limit + 1, offset: offset)
        let next: JSONValue =
            nodes.count > limit ? .string(Data(String(offset + limit).utf8).base64EncodedString()) : .null
        return DemoReply(
            .object(["items": .array(nodes.prefix(limit).map(DemoRepresentation.v2)), "next_cursor": next]))
    }

    /// `ids=1,2,3` (batch), `album_id=1,2` (the tracks of those albums), or page-number paging
    /// over all tracks.
    private func tracks(_ request: Request) throws -> DemoReply {
        let parameters = request.uri.queryParameters
        if let ids = parameters.get("ids") {
            let keys = ids.split(separator: ",").compactMap { Int($0.trimmingCharacters(in: .whitespaces)) }
            let nodes = try fetch("Track", FetchPredicate("id IN %@", keys))
            return DemoReply(.object(["data": .array(nodes.map(DemoRepresentation.v2))]))
        }
        if let albums = parameters.get("album_id") {
            let keys = albums.split(separator: ",").compactMap { Int($0.trimmingCharacters(in: .whitespaces)) }
            let nodes = try fetch("Track", FetchPredicate("album.id IN %@", keys), sort: "number")
            return DemoReply(.object(["data": .array(nodes.map(DemoRepresentation.v2))]))
        }
        return try pagedList("Track", request, sortable: false)
    }

    private func create(_ entity: String, _ body: JSONValue) throws -> JSONValue? {
        let (attributes, relationships) = try DemoRepresentation.fromV2(body, entity: entity)
        var node = Node(
            id: .temporary(entity: entity), attributes: attributes.filter { !$0.value.isNull },
            relationships: relationships)
        if let key = attributes["id"], !key.isNull { node.attributes["id"] = key }
        let result = try save(SaveChanges(inserted: [node]))
        guard let id = result.permanentIDs[node.id] else { return nil }
        return store.node(for: id).map(DemoRepresentation.v2)
    }

    private func update(_ entity: String, id: Int, _ body: JSONValue, basedOn version: String?) throws -> JSONValue? {
        let objectID = ObjectID(entity: entity, key: .integer(id))
        guard store.node(for: objectID) != nil else { return nil }
        var (attributes, relationships) = try DemoRepresentation.fromV2(body, entity: entity)
        attributes.removeValue(forKey: "id")
        // The store refuses a change based on another version than its own (409, here 412).
        _ = try save(
            SaveChanges(updated: [
                Node(id: objectID, attributes: attributes, relationships: relationships, version: version)
            ]))
        return store.node(for: objectID).map(DemoRepresentation.v2)
    }

    private func remove(_ entity: String, id: Int, basedOn version: String?) throws -> JSONValue? {
        let objectID = ObjectID(entity: entity, key: .integer(id))
        guard store.node(for: objectID) != nil else { return nil }
        _ = try save(SaveChanges(deleted: [objectID], deletedVersions: version.map { [objectID: $0] } ?? [:]))
        return .object([:])
    }

    /// The version an `If-Match` header names, without its quotes.
    private static func basedOn(_ request: Request) -> String? {
        request.headers[.ifMatch].map { $0.trimmingCharacters(in: CharacterSet(charactersIn: "\"")) }
    }
}
