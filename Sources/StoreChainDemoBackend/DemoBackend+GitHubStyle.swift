import Foundation
import Hummingbird
import StoreChain

/// v3: an API shaped like GitHub's. Every list pages by page number (`page`, `per_page`: 30 by
/// default, at most 100) with `Link: rel="next"` and `rel="last"`; lists take `ids=1,2,3`
/// batches; per-parent lists (`/v3/bands/{id}/albums`, `/v3/albums/{id}/tracks`) page too.
/// Records are written as v2 writes them, in top-level arrays. Turn on `DemoQuirks.etags` and
/// `maxAgeSeconds` for GitHub's `ETag` and `Cache-Control: max-age=60`.
extension DemoBackend {
    func addGitHubStyleRoutes(to router: Router<BasicRequestContext>) {
        for (path, entity) in [("bands", "Band"), ("albums", "Album"), ("tracks", "Track")] {
            router.get("/v3/\(path)") { request, _ in
                try await self.respond(request, route: "/v3/\(path)") { request in
                    try self.gitHubList(entity, nil, request)
                }
            }
            router.get("/v3/\(path)/{id}") { request, context in
                try await self.respond(request, route: "/v3/\(path)/{id}") { _ in
                    let id = try context.parameters.require("id", as: Int.self)
                    return self.store.node(for: ObjectID(entity: entity, key: .integer(id))).map {
                        DemoReply(DemoRepresentation.v2($0))
                    }
                }
            }
        }
        for (path, parent, child, inverse) in [
            ("bands", "Band", "Album", "band"), ("albums", "Album", "Track", "album"),
        ] {
            let route = "/v3/\(path)/{id}/\(child == "Album" ? "albums" : "tracks")"
            router.get(RouterPath(route)) { request, context in
                try await self.respond(request, route: route) { request in
                    let id = try context.parameters.require("id", as: Int.self)
                    guard self.store.node(for: ObjectID(entity: parent, key: .integer(id))) != nil else { return nil }
                    return try self.gitHubList(child, try FetchPredicate("\(inverse).id == %d", id), request)
                }
            }
        }
    }

    /// One page of `entity` (matching `filter`) in key order, or the objects an `ids=` batch names.
    private func gitHubList(_ entity: String, _ filter: FetchPredicate?, _ request: Request) throws -> DemoReply {
        let parameters = request.uri.queryParameters
        if let ids = parameters.get("ids") {
            let keys = ids.split(separator: ",").compactMap { Int($0.trimmingCharacters(in: .whitespaces)) }
            return DemoReply(.array(try fetch(entity, FetchPredicate("id IN %@", keys)).map(DemoRepresentation.v2)))
        }
        let page = max(1, parameters.get("page", as: Int.self) ?? 1)
        let perPage = min(100, max(1, parameters.get("per_page", as: Int.self) ?? 30))
        let total = try fetch(entity, filter).count
        let nodes = try fetch(entity, filter, limit: perPage, offset: (page - 1) * perPage)
        let pages = max(1, (total + perPage - 1) / perPage)
        func link(_ page: Int) -> String { request.uri.path + "?page=\(page)&per_page=\(perPage)" }
        return DemoReply(
            .array(nodes.map(DemoRepresentation.v2)), next: page < pages ? link(page + 1) : nil,
            last: link(pages))
    }
}
