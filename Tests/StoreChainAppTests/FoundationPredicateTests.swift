import Foundation
import StoreChain
import StoreChainTesting
import Testing

/// Foundation's `#Predicate` and `SortDescriptor` over the generated types' `Fields`: each
/// predicate converts to the same `FetchPredicate` its string form parses to, and fetches the
/// same objects from the music fixture; what has no equivalent is an error naming the part.
@Suite struct FoundationPredicateTests {
    let context: ObjectContext

    init() throws {
        let store = try MusicFixture.store()
        context = ObjectContext(chain: Chain(handlers: [], terminal: store), model: store.model)
    }

    static let minimumYear = 2005
    static let shortTracks = 200...310

    static let albumCases: [(Predicate<Album.Fields>, String)] = [
        (#Predicate { $0.title == "Takk..." }, #"title == "Takk...""#),
        (#Predicate { $0.year == 1999 }, "year == 1999"),
        (#Predicate { $0.year != 1999 }, "year != 1999"),
        (#Predicate { $0.year == nil }, "year == nil"),
        (#Predicate { ($0.year ?? 0) > 2000 }, "year > 2000"),
        (#Predicate { 2000 < ($0.year ?? 0) }, "year > 2000"),
        (#Predicate { ($0.year ?? 2000) >= 2005 }, "year >= 2005"),
        (#Predicate { ($0.year ?? 2010) >= 2005 }, "year == nil OR year >= 2005"),
        (#Predicate { ($0.year ?? 0) != 2010 }, "year == nil OR year != 2010"),
        (#Predicate { ($0.year ?? 2010) != 2010 }, "year != nil AND year != 2010"),
        (#Predicate { ($0.year ?? 0) >= minimumYear }, "year >= 2005"),
        // An optional attribute with a value standing in (it was refused, naming no attribute).
        (#Predicate { (1990...2000).contains($0.year ?? 0) }, "year BETWEEN {1990, 2000}"),
        (#Predicate { (1990...2000).contains($0.year ?? 1995) }, "year == nil OR year BETWEEN {1990, 2000}"),
        (#Predicate { (1990..<2000).contains($0.year ?? 2000) }, "year != nil AND year >= 1990 AND year < 2000"),
        (#Predicate { [1999, 2001].contains($0.year ?? 0) }, "year IN {1999, 2001}"),
        (#Predicate { [1999, 0].contains($0.year ?? 0) }, "year == nil OR year IN {1999, 0}"),
        (#Predicate { $0.band.country == "IS" }, #"band.country == "IS""#),
        (#Predicate { $0.band.name.starts(with: "Rue") }, #"band.name BEGINSWITH "Rue""#),
        (#Predicate { $0.title.contains("a") }, #"title CONTAINS "a""#),
        (#Predicate { !$0.title.contains("a") }, #"NOT title CONTAINS "a""#),
        (#Predicate { ["Shout", "Takk..."].contains($0.title) }, #"title IN {"Shout", "Takk..."}"#),
        (#Predicate { $0.tracks.contains { $0.seconds > 400 } }, "ANY tracks.seconds > 400"),
        (#Predicate { $0.tracks.allSatisfy { $0.seconds < 300 } }, "ALL tracks.seconds < 300"),
        (
            #Predicate { $0.tracks.allSatisfy { $0.seconds < 300 && $0.seconds > 100 } },
            "ALL tracks.seconds < 300 AND ALL tracks.seconds > 100"
        ),
        (
            #Predicate { $0.tracks.contains { $0.seconds > 600 || $0.title == "Remedies" } },
            #"ANY tracks.seconds > 600 OR ANY tracks.title == "Remedies""#
        ),
        (#Predicate { !$0.tracks.contains { $0.title.starts(with: "G") } }, #"NOT ANY tracks.title BEGINSWITH "G""#),
        (#Predicate { $0.tracks.count >= 2 }, "tracks.@count >= 2"),
        (#Predicate { $0.tracks.isEmpty }, "tracks.@count == 0"),
        (
            #Predicate { ($0.price ?? 0) < 9 || $0.band.country == "IS" },
            #"price == nil OR price < 9.0 OR band.country == "IS""#
        ),
        (#Predicate { ($0.price ?? 10) < 9 }, "price < 9.0"),
        (#Predicate { $0.price != nil && $0.year == nil }, "price != nil AND year == nil"),
        (#Predicate { _ in true }, "TRUEPREDICATE"),
    ]

    static let bandCases: [(Predicate<Band.Fields>, String)] = [
        (#Predicate { $0.country?.starts(with: "U") == true }, #"country BEGINSWITH "U""#),
        (#Predicate { $0.country?.starts(with: "U") ?? true }, #"country == nil OR country BEGINSWITH "U""#),
        (#Predicate { $0.country?.starts(with: "U") != true }, #"NOT country BEGINSWITH "U""#),
        // Swift: a band without a country is neither `== false` nor `== true`.
        (#Predicate { $0.country?.starts(with: "U") == false }, #"country != nil AND NOT country BEGINSWITH "U""#),
        (
            #Predicate { $0.country?.starts(with: "U") != false },
            #"NOT (country != nil AND NOT country BEGINSWITH "U")"#
        ),
        (#Predicate { ($0.country ?? "").starts(with: "U") }, #"country BEGINSWITH "U""#),
        (#Predicate { ($0.country ?? "").starts(with: "") }, #"country == nil OR country BEGINSWITH """#),
        (
            #Predicate { band in band.country.flatMap { _ in band.name == "low" } ?? false },
            #"country != nil AND name == "low""#
        ),
        (#Predicate { $0.active == true }, "active == true"),
        (#Predicate { $0.active ?? false }, "active == true"),
        (#Predicate { $0.active ?? true }, "active == nil OR active == true"),
        (#Predicate { $0.founded != nil }, "founded != nil"),
        (#Predicate { $0.albums.contains { ($0.year ?? 2000) < 1995 } }, "ANY albums.year < 1995"),
        (
            #Predicate { $0.albums.contains { ($0.year ?? 0) < 1995 } },
            "ANY albums.year == nil OR ANY albums.year < 1995"
        ),
        (#Predicate { $0.albums.count > 1 && $0.name != "low" }, #"albums.@count > 1 AND name != "low""#),
    ]

    static let trackCases: [(Predicate<Track.Fields>, String)] = [
        (#Predicate { (300...500).contains($0.seconds) }, "seconds BETWEEN {300, 500}"),
        (#Predicate { (300..<500).contains($0.seconds) }, "seconds >= 300 AND seconds < 500"),
        (#Predicate { shortTracks.contains($0.seconds) }, "seconds BETWEEN {200, 310}"),
        (#Predicate { $0.album.band.name == "Sigur Rós" }, #"album.band.name == "Sigur Rós""#),
        (#Predicate { $0.seconds > $0.id }, "seconds > id"),
    ]

    @Test func albumPredicatesConvertToTheirStringFormAndFetchTheSameAlbums() async throws {
        for (predicate, format) in Self.albumCases {
            try await expectSameAnswers(predicate, format, fetch: { try await Album.fetch(context, where: predicate) })
        }
    }

    @Test func bandPredicatesConvertToTheirStringFormAndFetchTheSameBands() async throws {
        for (predicate, format) in Self.bandCases {
            try await expectSameAnswers(predicate, format, fetch: { try await Band.fetch(context, where: predicate) })
        }
    }

    @Test func trackPredicatesConvertToTheirStringFormAndFetchTheSameTracks() async throws {
        for (predicate, format) in Self.trackCases {
            try await expectSameAnswers(predicate, format, fetch: { try await Track.fetch(context, where: predicate) })
        }
    }

    /// The cases are not vacuous: each selects some albums but not all.
    @Test func eachAlbumCaseTellsAlbumsApart() async throws {
        for (predicate, format) in Self.albumCases where format != "TRUEPREDICATE" {
            let count = try await Album.count(context, where: predicate)
            #expect((1...5).contains(count), "\(format) selects \(count) of 6 albums")
        }
    }

    #if canImport(Darwin)
        @Test func localizedStandardContainsIgnoresCaseAndDiacritics() async throws {
            try await expectSameAnswers(
                #Predicate<Band.Fields> { $0.name.localizedStandardContains("ROS") }, #"name CONTAINS[cd] "ROS""#,
                fetch: { try await Band.fetch(context, where: #Predicate { $0.name.localizedStandardContains("ROS") }) }
            )
        }
    #endif

    @Test func sortDescriptorsConvertToSortKeys() async throws {
        let byYear = try await Album.fetch(
            context, where: #Predicate { $0.year != nil }, sortBy: [SortDescriptor(\.year, order: .reverse)], limit: 3)
        #expect(
            try await byYear.asyncMap { try await $0.title } == ["Remedies Ahead", "Guide to an Escape", "Takk..."])
        #expect(try FetchSortDescriptor(SortDescriptor(\Album.Fields.band.name)) == FetchSortDescriptor("band.name"))
        #expect(
            try FetchSortDescriptor(SortDescriptor(\Track.Fields.seconds, order: .reverse))
                == FetchSortDescriptor("seconds", ascending: false))
        let bands = try await Band.fetch(context, sortBy: [SortDescriptor(\.name)])
        #if canImport(Darwin)
            let expected = ["low", "Mötley Crüe", "Rue Royale", "Sigur Rós"]  // .localizedStandard: ignores case
        #else
            let expected = ["Mötley Crüe", "Rue Royale", "Sigur Rós", "low"]  // Comparable: exact
        #endif
        #expect(try await bands.asyncMap { try await $0.name } == expected)
    }

    /// A Foundation predicate sorts by typed keys, and a typed predicate by Foundation sort
    /// descriptors: the two spellings mix ("cannot convert Predicate to FetchPredicate" before).
    @Test func foundationAndTypedSpellingsMix() async throws {
        let typedSort = try await Album.fetch(
            context, where: #Predicate { $0.year != nil }, sortedBy: [.year.descending], limit: 3)
        #expect(
            try await typedSort.asyncMap { try await $0.title } == ["Remedies Ahead", "Guide to an Escape", "Takk..."])
        let foundationSort = try await Album.fetch(
            context, where: Album.Keys.year != nil, sortBy: [SortDescriptor(\.year, order: .reverse)], limit: 3)
        #expect(foundationSort.map(\.objectID) == typedSort.map(\.objectID))
        let observed = try Album.observe(
            context, where: #Predicate { $0.year != nil }, sortedBy: [.year.descending], limit: 3)
        #expect(try await observed.first().map(\.objectID) == typedSort.map(\.objectID))
    }

    @Test func countAndObserveTakeFoundationPredicates() async throws {
        #expect(try await Track.count(context, where: #Predicate { $0.seconds > 400 }) == 2)
        let observed = try Band.observe(context, where: #Predicate { $0.country == "IS" })
        #expect(try await observed.first().count == 1)
        let sorted = try Track.observe(context, sortBy: [SortDescriptor(\.seconds, order: .reverse)], limit: 2)
        #expect(try await sorted.first().map { $0.loaded?.title } == ["Svefn-g-englar", "Starálfur"])
    }

    @Test func whatThePredicateLanguageCannotSayIsAnErrorNamingThePart() throws {
        let unsupported: [(Predicate<Album.Fields>, String)] = [
            (#Predicate { ($0.year ?? 0) * 2 > 4000 }, "Arithmetic"),
            (#Predicate { $0.title.count > 5 }, "String"),
            (#Predicate { $0.tracks.contains { $0.seconds > 100 && $0.seconds < 300 } }, "SUBQUERY"),
            (#Predicate { $0.tracks.contains { $0.seconds > $0.id } }, "two key paths"),
            (#Predicate { $0.band.albums.contains { $0.tracks.contains { $0.seconds > 1 } } }, "nests"),
            (#Predicate { $0.tracks.first?.seconds == 200 }, "Array"),
            (#Predicate { $0.tracks.allSatisfy { $0.seconds > 100 || $0.seconds < 50 } }, "SUBQUERY"),
            (#Predicate { (($0.year ?? 0) > 2000 ? $0.title : "x") == "x" }, "Conditional"),
        ]
        for (predicate, part) in unsupported {
            let error = #expect(throws: StoreChainError.self) { try FetchPredicate(predicate) }
            #expect(error?.code == .unsupportedPredicate)
            #expect(error?.message.contains(part) == true, "\(String(describing: error))")
        }
        // The part is shown with the model's names, not as the runtime prints a computed
        // property's key path (`\Fields.<computed 0x… (Optional<Int>)>` in a release build).
        let arithmetic = #expect(throws: StoreChainError.self) {
            try FetchPredicate(#Predicate<RenamedFields> { ($0.releaseYear ?? 0) * 2 > 4000 })
        }
        #expect(arithmetic?.message.contains("RenamedFields.release_year") == true, "\(String(describing: arithmetic))")
        let sortError = #expect(throws: StoreChainError.self) {
            try FetchSortDescriptor(SortDescriptor(\Track.Fields.album.band.name))
        }
        #expect(sortError?.code == .unsupportedPredicate)
    }

    @Test func aFetchWithAnUnsupportedPredicateFailsBeforeAnythingIsSent() async throws {
        let store = try MusicFixture.store()
        let terminal = RecordingResponder(forwardingTo: store)
        let context = ObjectContext(chain: Chain(handlers: [], terminal: terminal), model: store.model)
        await #expect(throws: StoreChainError.self) {
            try await Album.fetch(context, where: #Predicate { ($0.year ?? 0) + 1 > 2000 })
        }
        #expect(terminal.requests.isEmpty)
    }

    private func expectSameAnswers<T: TypedObject>(
        _ predicate: Predicate<T.Fields>, _ format: String, fetch: () async throws -> [T],
        sourceLocation: SourceLocation = #_sourceLocation
    ) async throws {
        let parsed = try FetchPredicate(format)
        let converted = try FetchPredicate(predicate)
        #expect(converted == parsed, "\(converted.format) is not \(parsed.format)", sourceLocation: sourceLocation)
        let expected = try await context.fetch(FetchRequest(entity: T.entityName, predicate: parsed))
        #expect(
            try await fetch().map(\.objectID).sorted(by: Self.byKey) == expected.map(\.objectID).sorted(by: Self.byKey),
            "\(format)", sourceLocation: sourceLocation)
    }

    private static func byKey(_ a: ObjectID, _ b: ObjectID) -> Bool { "\(a)" < "\(b)" }
}

extension Array {
    fileprivate func asyncMap<T>(_ transform: (Element) async throws -> T) async rethrows -> [T] {
        var results: [T] = []
        for element in self { results.append(try await transform(element)) }
        return results
    }
}

/// Fields whose Swift names differ from the model's, as generated types' do for `release_year`.
enum RenamedFields: ModelFields {
    var releaseYear: Int? { switch self {} }

    static func modelName(for keyPath: AnyKeyPath) -> String? {
        keyPath == \RenamedFields.releaseYear ? "release_year" : nil
    }
}
