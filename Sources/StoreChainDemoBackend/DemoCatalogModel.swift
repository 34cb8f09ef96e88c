/// The music catalog model (the same text as `Examples/Music/music.model.yml`; a test keeps
/// the two in step).
public enum DemoCatalogModel {
    public static let text = """
        # The music catalog used by the README, the demo and the tests.
        entities:
          Band:
            key: id
            attributes: { id: integer, name: string, founded: date?, url: url?, country: string? }
            relationships: { albums: { to-many: Album, inverse: band } }
          Album:
            key: id
            attributes: { id: integer, title: string, year: integer?, price: double? }
            relationships:
              band: { to-one: Band, inverse: albums }
              tracks: { to-many: Track, inverse: album, ordered: true }
          Track:
            key: id
            attributes: { id: integer, title: string, number: integer, seconds: integer?, genre: string? }
            relationships: { album: { to-one: Album, inverse: tracks } }

        """
}
