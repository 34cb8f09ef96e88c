import Foundation
import StoreChain
import Testing

@Suite struct PredicateBuilderTests {
    enum Band {
        static let name = Key<String>("name")
        static let founded = Key<Date>("founded")
        static let albums = ToMany("albums")
    }

    enum Album {
        static let title = Key<String>("title")
        static let year = Key<Int>("year")
        static let price = Key<Double>("price")
        static let band = ToOne("band")
        static let tracks = ToMany("tracks")
    }

    enum Track {
        static let seconds = Key<Int>("seconds")
    }

    @Test(arguments: [
        (
            Album.year >= 1990 && Album.title.beginsWith("rue", options: .caseInsensitive),
            "year >= 1990 AND title BEGINSWITH[c] \"rue\""
        ),
        (Album.year < 1990 || Album.year > 2010 || Album.price == nil, "year < 1990 OR year > 2010 OR price == nil"),
        (!(Album.year == 2000), "NOT (year == 2000)"),
        (Album.band.key(Band.name) == "Low", "band.name == \"Low\""),
        (Album.band != nil, "band != nil"),
        (Band.albums.any(Album.year) > 2000, "ANY albums.year > 2000"),
        (Band.albums.all(Album.price) < 10.0, "ALL albums.price < 10.0"),
        (
            Band.albums.none(Album.title).contains("x", options: [.caseInsensitive, .diacriticInsensitive]),
            "NONE albums.title CONTAINS[cd] \"x\""
        ),
        (Band.albums.count > 1, "albums.@count > 1"),
        (Album.tracks.sum(Track.seconds) > 500.0, "tracks.@sum.seconds > 500.0"),
        (Album.tracks.max(Track.seconds) >= 375, "tracks.@max.seconds >= 375"),
        (Album.year.isIn([1989, 2005]), "year IN {1989, 2005}"),
        (Album.year.between(1999, 2010), "year BETWEEN {1999, 2010}"),
        (
            Band.name.like("R*e") && Band.name.matches("R.*") && Band.name.endsWith("e"),
            "name LIKE \"R*e\" AND name MATCHES \"R.*\" AND name ENDSWITH \"e\""
        ),
        (Band.name.equals("low", options: .caseInsensitive), "name ==[c] \"low\""),
        (Album.price > Album.price, "price > price"),
    ])
    func buildsTheSameASTAsParsing(_ built: FetchPredicate, _ format: String) throws {
        #expect(built.format == format)
        #expect(try FetchPredicate(format: format) == built)
    }

    @Test func builtPredicatesEvaluate() throws {
        let store = try Fixtures.store()
        #expect(try Fixtures.keys(store, "Band", Band.albums.any(Album.year) < 1995) == [3])
        #expect(try Fixtures.keys(store, "Album", Album.tracks.avg(Track.seconds) > 300.0) == [20, 21])
        #expect(try Fixtures.keys(store, "Band", Band.founded == nil) == [3, 4])
    }
}
