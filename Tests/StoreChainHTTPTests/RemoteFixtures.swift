import Foundation
import StoreChain
import StoreChainHTTP

/// A small model and backend description for the adapter's unit tests.
enum RemoteFixtures {
    static let base = URL(string: "https://api.example/v2")!

    static func model() throws -> ObjectModel {
        try ObjectModel([
            EntityDescription(
                "Band", key: "id",
                attributes: [
                    AttributeDescription("id", .integer), AttributeDescription("name", .string),
                    AttributeDescription("founded", .date, optional: true),
                    AttributeDescription("rating", .double, optional: true),
                ],
                relationships: [RelationshipDescription("albums", .toMany(ordered: false), "Album", inverse: "band")]),
            EntityDescription(
                "Album", key: "id",
                attributes: [
                    AttributeDescription("id", .integer), AttributeDescription("title", .string),
                    AttributeDescription("year", .integer, optional: true),
                ],
                relationships: [RelationshipDescription("band", .toOne, "Band", inverse: "albums", optional: true)]),
        ])
    }

    static func options() -> RemoteOptions {
        var band = RemoteEntityOptions(
            records: "data.items",
            attributes: ["name": "attributes.name", "founded": "attributes.founded_at", "rating": "stats.rating"],
            relationships: ["albums": .embedded("albums")])
        band.fetch = [
            RemoteEndpoint(
                "GET /bands/search?q={name}",
                bind: ["name": ParameterBinding("name", .beginsWith, caseInsensitive: true, required: true)]),
            RemoteEndpoint(
                "GET /bands?sort={sort}",
                sort: SortBinding(variable: "sort", values: ["name": "name", "-name": "-name"])),
        ]
        band.get = "GET /bands/{id}"
        band.create = "POST /bands"
        band.update = "PATCH /bands/{id}"
        band.delete = "DELETE /bands/{id}"
        var album = RemoteEntityOptions(
            records: "data", key: "album_id", relationships: ["band": .foreignKey("band_id")])
        album.fetch = [
            RemoteEndpoint("GET /bands/{band}/albums", bind: ["band": ParameterBinding("band.id")]),
            RemoteEndpoint(
                "GET /albums?from={from}&to={to}&ids={ids}",
                bind: [
                    "from": ParameterBinding("year", .atLeast), "to": ParameterBinding("year", .atMost),
                    "ids": ParameterBinding("id", .oneOf),
                ]),
        ]
        album.create = "POST /albums"
        return RemoteOptions(baseURL: base, entities: ["Band": band, "Album": album])
    }

    static let bandsPage = #"""
        {"data": {"items": [
          {"id": 1, "attributes": {"name": "Low", "founded_at": 757382400}, "stats": {"rating": "4.5"},
           "albums": [{"album_id": 10, "title": "Things We Lost", "year": 2001, "band_id": 1}]},
          {"id": "2", "attributes": {"name": "Lower Dens", "founded_at": "2010-01-01T00:00:00Z"}, "albums": []}
        ]}}
        """#
}
