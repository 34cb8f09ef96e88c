@_spi(Internals) import StoreChain

/// A small music catalog (4 bands, 6 albums, 7 tracks, with gaps and odd values) for handler
/// tests: `MusicFixture.model()` is its model, `recordsJSON` its records and
/// `MusicFixture.store()` an `InMemoryStore` holding them (a new one each call). It has no
/// values of its own.
public enum MusicFixture {
    /// The model of bands, albums and tracks.
    public static func model() throws -> ObjectModel {
        try ObjectModel([
            EntityDescription(
                "Band", key: "id",
                attributes: [
                    AttributeDescription("id", .integer), AttributeDescription("name", .string),
                    AttributeDescription("founded", .date, optional: true),
                    AttributeDescription("country", .string, optional: true),
                    AttributeDescription("active", .boolean, optional: true),
                ],
                relationships: [RelationshipDescription("albums", .toMany(ordered: false), "Album", inverse: "band")]),
            EntityDescription(
                "Album", key: "id",
                attributes: [
                    AttributeDescription("id", .integer), AttributeDescription("title", .string),
                    AttributeDescription("year", .integer, optional: true),
                    AttributeDescription("price", .double, optional: true),
                ],
                relationships: [
                    RelationshipDescription("band", .toOne, "Band", inverse: "albums"),
                    RelationshipDescription("tracks", .toMany(ordered: true), "Track", inverse: "album"),
                ]),
            EntityDescription(
                "Track", key: "id",
                attributes: [
                    AttributeDescription("id", .integer), AttributeDescription("title", .string),
                    AttributeDescription("seconds", .integer),
                ],
                relationships: [RelationshipDescription("album", .toOne, "Album", inverse: "tracks")]),
        ])
    }

    /// The fixture's records as JSON, as a `JSONFileStore` reads them.
    public static let recordsJSON = """
        {
          "Band": [
            {"id": 1, "name": "Rue Royale", "founded": "2006-03-01", "country": "UK", "active": true},
            {"id": 2, "name": "Sigur Rós", "founded": "1994-08-01T00:00:00Z", "country": "IS", "active": false},
            {"id": 3, "name": "Mötley Crüe", "active": "true"},
            {"id": 4, "name": "low", "country": "US"}
          ],
          "Album": [
            {"id": 10, "band": 1, "title": "Guide to an Escape", "year": 2010, "price": 9.99},
            {"id": 11, "band": 1, "title": "Remedies Ahead", "year": "2013"},
            {"id": 20, "band": 2, "title": "Ágætis byrjun", "year": 1999, "price": 12.0},
            {"id": 21, "band": 2, "title": "Takk...", "year": 2005, "price": 10},
            {"id": 30, "band": 3, "title": "Dr. Feelgood", "year": 1989, "price": "8"},
            {"id": 31, "band": 3, "title": "Shout", "price": 7.5}
          ],
          "Track": [
            {"id": 100, "album": 10, "title": "Guide to an Escape", "seconds": 200},
            {"id": 101, "album": 10, "title": "Halfway Home", "seconds": 310},
            {"id": 110, "album": 11, "title": "Remedies", "seconds": 150},
            {"id": 200, "album": 20, "title": "Svefn-g-englar", "seconds": 604},
            {"id": 201, "album": 20, "title": "Starálfur", "seconds": 407},
            {"id": 210, "album": 21, "title": "Glósóli", "seconds": 375},
            {"id": 300, "album": 30, "title": "Kickstart My Heart", "seconds": 282}
          ]
        }
        """

    /// An in-memory store holding the fixture's records.
    public static func store() throws -> InMemoryStore {
        let model = try model()
        let dataset = try RecordLoader(model: model).load(try JSONParser().parse(recordsJSON))
        return InMemoryStore(model: model, dataset: dataset)
    }
}
