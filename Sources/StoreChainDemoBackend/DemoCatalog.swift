import StoreChain

/// A deterministic music catalog (bands, albums, tracks) for the demo, tests and benchmarks.
///
/// The same `seed` and sizes always give the same records, in the record format that
/// `RecordLoader` and `JSONFileStore` read.
public struct DemoCatalog: Sendable {
    public var bands: Int
    public var seed: UInt64

    /// About `bands` × 7.5 albums and × 75 tracks: the default gives 200 bands, ~1,500 albums
    /// and ~15,000 tracks.
    public init(bands: Int = 200, seed: UInt64 = 2026) {
        self.bands = bands
        self.seed = seed
    }

    /// The records as JSON: `{"Band": […], "Album": […], "Track": […]}`.
    public func records() -> JSONValue {
        var random = SplitMix64(seed: seed)
        var bandRecords: [JSONValue] = []
        var albumRecords: [JSONValue] = []
        var trackRecords: [JSONValue] = []
        var albumID = 1
        var trackID = 1
        for bandID in 1...max(1, bands) {
            let name = bandID == 1 ? "Rue Royale" : Self.bandName(&random)
            let founded = 1960 + Int(random.next() % 60)
            let genre = Self.genres[Int(random.next() % UInt64(Self.genres.count))]
            var band: [String: JSONValue] = [
                "id": .integer(bandID), "name": .string(name),
                "founded": .string("\(founded)-0\(1 + random.next() % 9)-1\(random.next() % 9)T00:00:00Z"),
                "country": .string(Self.countries[Int(random.next() % UInt64(Self.countries.count))]),
            ]
            if random.next() % 3 != 0 {
                band["url"] = .string("https://music.example/bands/\(bandID)")
            }
            bandRecords.append(.object(band))
            let albumCount = 5 + Int(random.next() % 6)
            for albumIndex in 0..<albumCount {
                var album: [String: JSONValue] = [
                    "id": .integer(albumID), "band": .integer(bandID),
                    "title": .string(Self.title(&random)),
                    "year": .integer(min(2026, founded + 1 + albumIndex * 2 + Int(random.next() % 3))),
                ]
                if random.next() % 5 != 0 {
                    album["price"] = .double(Double(699 + random.next() % 1000) / 100)
                }
                albumRecords.append(.object(album))
                for number in 1...(8 + Int(random.next() % 5)) {
                    trackRecords.append(
                        .object([
                            "id": .integer(trackID), "album": .integer(albumID), "number": .integer(number),
                            "title": .string(Self.title(&random)),
                            "seconds": .integer(120 + Int(random.next() % 300)), "genre": .string(genre),
                        ]))
                    trackID += 1
                }
                albumID += 1
            }
        }
        return .object(["Band": .array(bandRecords), "Album": .array(albumRecords), "Track": .array(trackRecords)])
    }

    private static let adjectives = [
        "Silver", "Quiet", "Electric", "Velvet", "Northern", "Hollow", "Golden", "Crimson", "Wild", "Paper",
        "Neon", "Broken", "Distant", "Lunar", "Sleepy", "Bright", "Frozen", "Secret", "Wandering", "Café",
    ]
    private static let nouns = [
        "Harbour", "Lanterns", "Engines", "Foxes", "Rivers", "Satellites", "Gardens", "Ghosts", "Tides", "Mirrors",
        "Parade", "Orchard", "Signals", "Sparrows", "Canyons", "Échos", "Wolves", "Islands", "Machines", "Bells",
    ]
    private static let genres = ["indie", "post-rock", "electronica", "folk", "jazz", "metal", "slowcore", "pop"]
    private static let countries = ["UK", "US", "IS", "DE", "FR", "SE", "JP", "CA"]

    private static func bandName(_ random: inout SplitMix64) -> String {
        let prefix = random.next() % 4 == 0 ? "The " : ""
        return prefix + adjectives[Int(random.next() % 20)] + " " + nouns[Int(random.next() % 20)]
    }

    private static func title(_ random: inout SplitMix64) -> String {
        let words = ["Night", "Morning", "Light", "Home", "Escape", "Weather", "Summer", "Letters", "Heart", "Road"]
        return adjectives[Int(random.next() % 20)] + " " + words[Int(random.next() % 10)]
    }
}
