import Foundation
import StoreChainHTTP

/// How StoreChain's remote adapter describes the demo backend: the same app model, served by
/// the v1 dump-only API or by the v2 API with its own field names, paging and search.
public enum DemoRemoteOptions {
    /// v1: one endpoint, `GET /v1/catalog`, holds every entity.
    public static func v1(baseURL: URL) -> RemoteOptions {
        func entity(_ records: String, _ relationships: [String: RemoteRelationship]) -> RemoteEntityOptions {
            RemoteEntityOptions(
                records: records, relationships: relationships,
                fetch: [RemoteEndpoint("GET /v1/catalog")])
        }
        return RemoteOptions(
            baseURL: baseURL,
            entities: [
                "Band": entity("catalog.bands", [:]),
                "Album": entity("catalog.albums", ["band": .foreignKey("band")]),
                "Track": entity("catalog.tracks", ["album": .foreignKey("album")]),
            ])
    }

    /// v2: search, get by key, batch get, nested routes, paging (page numbers with `Link`
    /// headers for bands and tracks, cursors for albums), and writes.
    public static func v2(baseURL: URL) -> RemoteOptions {
        let v2 = baseURL.appending(path: "v2")
        var band = RemoteEntityOptions(
            records: "data",
            attributes: [
                "name": "attributes.name", "founded": "attributes.founded_at", "url": "attributes.home_page",
                "country": "attributes.country_code",
            ],
            dateFormat: .epochSeconds)
        band.fetch = [
            RemoteEndpoint(
                "GET /bands/search?name={name}",
                bind: ["name": ParameterBinding("name", .beginsWith, caseInsensitive: true, required: true)]),
            RemoteEndpoint(
                "GET /bands?page={page}&per_page={per_page}&sort={sort}",
                sort: SortBinding(
                    variable: "sort",
                    values: ["name": "name", "-name": "-name", "founded": "founded", "-founded": "-founded"],
                    tiesInKeyOrder: true, nils: .smallest),
                paging: .pages(page: "page", perPage: "per_page", size: 100, first: 1), keyOrdered: true),
        ]
        band.get = "GET /bands/{id}"
        band.create = "POST /bands"
        band.update = "PATCH /bands/{id}"
        band.delete = "DELETE /bands/{id}"
        band.version = "version"

        var album = RemoteEntityOptions(
            key: "album_id", attributes: ["year": "release_year", "price": "price_usd"],
            relationships: ["band": .foreignKey("band_id")])
        album.fetch = [
            RemoteEndpoint("GET /bands/{band}/albums", bind: ["band": ParameterBinding("band.id")], records: "data"),
            RemoteEndpoint(
                "GET /albums?cursor={cursor}&limit={limit}&band_id={band}&year_from={from}&year_to={to}",
                bind: [
                    "band": ParameterBinding("band.id"), "from": ParameterBinding("year", .atLeast),
                    "to": ParameterBinding("year", .atMost),
                ],
                paging: .cursor(variable: "cursor", next: "next_cursor", limit: "limit", size: 100), records: "items",
                keyOrdered: true),
        ]
        album.get = "GET /albums/{id}"
        album.create = "POST /albums"
        album.update = "PATCH /albums/{id}"
        album.delete = "DELETE /albums/{id}"
        album.version = "version"

        var track = RemoteEntityOptions(
            records: "data", attributes: ["title": "name", "number": "track_number", "seconds": "length_seconds"],
            relationships: ["album": .foreignKey("album_id")])
        track.fetch = [
            RemoteEndpoint("GET /tracks?ids={ids}", bind: ["ids": ParameterBinding("id", .oneOf, required: true)]),
            RemoteEndpoint(
                "GET /tracks?album_id={album}", bind: ["album": ParameterBinding("album.id", .oneOf, required: true)]),
            RemoteEndpoint(
                "GET /tracks?page={page}&per_page={per_page}",
                paging: .pages(page: "page", perPage: "per_page", size: 100, first: 1), keyOrdered: true),
        ]
        track.get = "GET /tracks/{id}"
        track.create = "POST /tracks"
        track.update = "PATCH /tracks/{id}"
        track.delete = "DELETE /tracks/{id}"
        track.version = "version"
        return RemoteOptions(
            baseURL: v2, entities: ["Band": band, "Album": album, "Track": track],
            changes: RemoteChangesOptions(
                request: "GET /changes?since={cursor}&wait={wait}", entity: "type", operation: "op"))
    }

    /// v2 with its changes followed as server-sent events (`GET /v2/events`) instead of the
    /// long-polled `GET /v2/changes`.
    public static func v2Stream(baseURL: URL) -> RemoteOptions {
        var options = v2(baseURL: baseURL)
        options.changes = RemoteChangesOptions(
            request: "GET /events", format: .eventStream, entity: "type", operation: "op", gapEvents: ["gap"])
        return options
    }

    /// v3, GitHub-style: every list pages by page number with `Link` headers (30 a page unless
    /// asked for up to 100), `ids=` batches, per-parent lists for albums and tracks that page;
    /// changes as server-sent events (`GET /v3/events`).
    public static func v3(baseURL: URL) -> RemoteOptions {
        let v3 = baseURL.appending(path: "v3")
        func entity(_ path: String, _ options: RemoteEntityOptions) -> RemoteEntityOptions {
            var options = options
            options.fetch = [
                RemoteEndpoint(
                    "GET /\(path)?ids={ids}", bind: ["ids": ParameterBinding("id", .oneOf, required: true)]),
                RemoteEndpoint(
                    "GET /\(path)?page={page}&per_page={per_page}",
                    paging: .pages(page: "page", perPage: "per_page", size: 30, first: 1), keyOrdered: true),
            ]
            options.get = "GET /\(path)/{id}"
            return options
        }
        let band = RemoteEntityOptions(
            attributes: [
                "name": "attributes.name", "founded": "attributes.founded_at", "url": "attributes.home_page",
                "country": "attributes.country_code",
            ],
            relationships: ["albums": .endpoint("GET /bands/{id}/albums")], dateFormat: .epochSeconds)
        let album = RemoteEntityOptions(
            key: "album_id", attributes: ["year": "release_year", "price": "price_usd"],
            relationships: ["band": .foreignKey("band_id"), "tracks": .endpoint("GET /albums/{id}/tracks")])
        let track = RemoteEntityOptions(
            attributes: ["title": "name", "number": "track_number", "seconds": "length_seconds"],
            relationships: ["album": .foreignKey("album_id")])
        return RemoteOptions(
            baseURL: v3,
            entities: [
                "Band": entity("bands", band), "Album": entity("albums", album), "Track": entity("tracks", track),
            ],
            changes: RemoteChangesOptions(
                request: "GET /events", format: .eventStream, entity: "type", operation: "op", gapEvents: ["gap"]))
    }
}
