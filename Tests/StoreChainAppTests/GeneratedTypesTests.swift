import Foundation
import StoreChain
import StoreChainPipeline
import StoreChainTesting
import Testing

/// The types the StoreChainModelPlugin generates from `music.model.yml`, used as app code uses
/// them: typed insert, setters, sort and prefetch keys, counts, observations, and a required
/// to-one that is not optional.
@Suite struct GeneratedTypesTests {
    let store: InMemoryStore
    let terminal: RecordingResponder
    let context: ObjectContext

    init() throws {
        store = try MusicFixture.store()
        terminal = RecordingResponder(forwardingTo: store)
        context = ObjectContext(chain: Chain(handlers: [], terminal: terminal), model: store.model)
    }

    @Test func theModelFileIsTheFixturesModel() throws {
        let file = try #require(Bundle.module.url(forResource: "music.model", withExtension: "yml"))
        #expect(try ModelFile.load(contentsOf: file) == MusicFixture.model())
    }

    @Test func typedSortLimitAndOffset() async throws {
        let albums = try await Album.fetch(
            context, where: Album.Keys.year != nil, sortedBy: [.year.descending], limit: 3, offset: 1)
        #expect(try await albums.asyncMap { try await $0.title } == ["Guide to an Escape", "Takk...", "Ágætis byrjun"])
        let bands = try await Band.fetch(context, sortedBy: [.name.caseInsensitive])
        #expect(try await bands.asyncMap { try await $0.name } == ["low", "Mötley Crüe", "Rue Royale", "Sigur Rós"])
        guard case .fetch(let request) = terminal.requests.last else {
            Issue.record("no fetch was sent")
            return
        }
        #expect(request.sortDescriptors == [FetchSortDescriptor("name", caseInsensitive: true)])
    }

    @Test func prefetchingLoadsTheRelationshipWithTheFetch() async throws {
        let albums = try await Album.fetch(context, where: Album.Keys.title == "Takk...", prefetching: [.band])
        let forwarded = terminal.requests.count
        let band = try await albums[0].band
        #expect(try await band.name == "Sigur Rós")
        #expect(terminal.requests.count == forwarded, "the band came with the fetch")
    }

    @Test func insertSetAndSaveThroughTypedAPI() async throws {
        let band = try Band.insert(into: context, name: "Beach House", country: "US")
        let album = try Album.insert(into: context, title: "Bloom", band: band)
        try album.setYear(2012)
        try album.setPrice(nil)
        #expect(album.object.isInserted)
        try await context.save()

        #expect(album.objectID == ObjectID(entity: "Album", key: 32))
        #expect(try await album.year == 2012)
        #expect(try await album.band == band)
        #expect(try await band.albums == [album])
        let stored = try #require(store.node(for: album.objectID))
        #expect(stored[attribute: "title"] == "Bloom" && stored[attribute: "year"] == 2012)
        #expect(try await Album.count(context, where: Album.Keys.band.key(Band.Keys.name) == "Beach House") == 1)

        try album.setTitle("Bloom (Deluxe)")
        let rue = try #require(try await Band.fetch(context, where: Band.Keys.name == "Rue Royale").first)
        try album.setBand(rue)
        try await context.save()
        #expect(store.node(for: album.objectID)?[attribute: "title"] == "Bloom (Deluxe)")
        #expect(try await rue.albums.contains(album))
    }

    /// Typed objects say their state and are deleted as they are, and two values are equal
    /// when they wrap the same object of the context (fetched twice, or across a save).
    @Test func aTypedObjectIsDeletedAsItIsAndSaysItsState() async throws {
        let band = try Band.insert(into: context, name: "Beach House", country: "US")
        #expect(band.isInserted && band.hasChanges && !band.isDeleted)
        try await context.save()
        #expect(!band.hasChanges && !band.hasUnsentChanges, "a backend in reach has the save")
        let again = try #require(try await Band.fetch(context, where: Band.Keys.name == "Beach House").first)
        #expect(again == band, "one object per ID in a context, across the save of a new one")
        #expect(Set([again, band]).count == 1)

        context.delete(again)
        #expect(band.isDeleted && band.hasChanges)
        try await context.save()
        #expect(store.node(for: band.objectID) == nil)
        #expect(try await Band.count(context, where: Band.Keys.name == "Beach House") == 0)

        let other = ObjectContext(chain: Chain(handlers: [], terminal: terminal), model: store.model)
        let low = try #require(try await Band.fetch(other, where: Band.Keys.name == "low").first)
        let lowHere = try #require(try await Band.fetch(context, where: Band.Keys.name == "low").first)
        #expect(low != lowHere && low.objectID == lowHere.objectID, "two contexts, two objects, one ID")
    }

    @Test func aTypedInsertStillChecksRequiredValuesOnSave() async throws {
        let band = try Band.insert(into: context, name: "Grouper")
        let track = try Track.insert(
            into: context, title: "Heavy Water", seconds: 200,
            album: Album.insert(into: context, title: "Dragging a Dead Deer", band: band))
        #expect(track.object.isInserted)
        try await context.save()
        #expect(try await track.album.title == "Dragging a Dead Deer")
    }

    @Test func aRequiredToOneThatIsEmptyIsAnErrorNotNil() async throws {
        let album = try #require(try await Album.fetch(context, where: Album.Keys.title == "Shout").first)
        #expect(try await album.band.name == "Mötley Crüe")
        try album.object.setRelated(nil, for: "band")
        let error = await #expect(throws: StoreChainError.self) { try await album.band }
        #expect(error?.code == .invalidData)
        #expect(error?.message == "Album/31.band is required but holds no Band", "\(String(describing: error))")
    }

    @Test func typedCountsAndObservations() async throws {
        #expect(try await Track.count(context) == 7)
        #expect(try await Track.count(context, where: Track.Keys.seconds > 400) == 2)
        let observation = Band.observe(context, where: Band.Keys.country == "US", sortedBy: [.name])
        var results = observation.timeout(.seconds(5), clock: ManualClock()).makeAsyncIterator()
        let before = try #require(try await results.next())
        #expect(try await before.asyncMap { try await $0.name } == ["low"])
        _ = try Band.insert(into: context, name: "Beach House", country: "US")
        try await context.save()
        let after = try #require(try await results.next())
        #expect(try await after.asyncMap { try await $0.name } == ["Beach House", "low"])
        #expect(try await Band.observe(context, where: Band.Keys.country == "IS").first().count == 1)
    }
}

extension Array {
    fileprivate func asyncMap<T>(_ transform: (Element) async throws -> T) async rethrows -> [T] {
        var results: [T] = []
        for element in self { results.append(try await transform(element)) }
        return results
    }
}

/// `loaded` reads what the context holds without a trip; `update` changes attributes by
/// assignment and sets only what changed.
extension GeneratedTypesTests {
    @Test func loadedValuesAreReadWithoutATripAndAreNilWhileAFault() async throws {
        let album = try #require(try await Album.fetch(context, where: Album.Keys.title == "Takk...").first)
        let sent = terminal.requests.count
        let values = try #require(album.loaded)
        #expect(values.title == "Takk..." && values.year == 2005 && values.price == 10 && values.id == 21)
        let band = try await album.band
        #expect(band.loaded == nil, "the band is a fault until something reads it")
        #expect(terminal.requests.count == sent)
        #expect(try await band.name == "Sigur Rós")
        #expect(band.loaded?.country == "IS")
    }

    @Test func loadedShowsUnsavedChangesAndIsASnapshot() async throws {
        let album = try #require(try await Album.fetch(context, where: Album.Keys.title == "Shout").first)
        var snapshot = try #require(album.loaded)
        try album.setYear(1985)
        #expect(snapshot.year == nil, "a snapshot keeps the values it was read with")
        #expect(album.loaded?.year == 1985)
        snapshot.title = "Not saved anywhere"
        #expect(album.loaded?.title == "Shout")
        let inserted = try Band.insert(into: context, name: "Grouper")
        #expect(inserted.loaded?.name == "Grouper" && inserted.loaded?.country == nil)
        #expect(inserted.loaded?.id == nil, "no key until the backend gives one")
        try await context.save()
        #expect(inserted.loaded?.id == store.node(for: inserted.objectID)?[attribute: "id"].integerValue)
        #expect(inserted.loaded?.id != nil)
    }

    @Test func updateAssignsLoadsAFaultAndSetsOnlyWhatChanged() async throws {
        let track = try #require(try await Track.fetch(context, where: Track.Keys.title == "Remedies").first)
        let album = try await track.album
        #expect(album.loaded == nil)
        try await album.update {
            $0.year = 2014
            $0.price = $0.price ?? 11.5
            $0.title = $0.title
        }
        #expect(album.loaded?.year == 2014 && album.loaded?.price == 11.5)
        #expect(album.hasChanges)
        try await context.save()
        let stored = try #require(store.node(for: album.objectID))
        #expect(stored[attribute: "year"] == 2014 && stored[attribute: "price"] == 11.5)
        #expect(stored[attribute: "title"] == "Remedies Ahead")

        try await album.update { $0.title = $0.title }
        #expect(!album.hasChanges, "assigning the same value changes nothing")
        struct Refused: Error {}
        await #expect(throws: Refused.self) {
            try await album.update {
                $0.year = 1
                throw Refused()
            }
        }
        #expect(album.loaded?.year == 2014, "a change that throws sets nothing")
    }
}
