import Foundation
import Observation
import StoreChain
import StoreChainTesting
import Synchronization
import Testing

/// `LiveResults` and `LiveObject` as Observation sees them: `withObservationTracking` is told of
/// every new result, a value change of an object in it, another context's save and a deletion.
@Suite(.timeLimit(.minutes(1))) struct LiveResultsTests {
    let store: InMemoryStore
    let chain: Chain
    let context: ObjectContext

    init() throws {
        store = try MusicFixture.store()
        chain = Chain(handlers: [], terminal: store)
        context = ObjectContext(chain: chain, model: store.model)
    }

    @Test func liveResultsFollowTheFetchThroughInsertsAndValueChanges() async throws {
        let live = LiveResults(Band.observe(context, where: Band.Keys.country == "US", sortedBy: [.name]))
        await waitUntil { live.isLoaded }
        #expect(live.objects.map { $0.loaded?.name } == ["low"])
        #expect(live.error == nil)

        _ = try Band.insert(into: context, name: "Beach House", country: "US")
        try await context.save()
        await waitUntil { live.objects.count == 2 }
        #expect(live.objects.map { $0.loaded?.name } == ["Beach House", "low"])

        let other = ObjectContext(chain: chain, model: store.model)
        let low = try #require(try await Band.fetch(other, where: Band.Keys.name == "low").first)
        try await low.update { $0.name = "Low" }
        try await other.save()
        await waitUntil { live.objects.map { $0.loaded?.name } == ["Beach House", "Low"] }
    }

    @Test func aFailedFirstFetchIsTheError() async throws {
        let live = LiveResults(
            Band.observe(
                context,
                where: FetchPredicate.comparison(Comparison(.keyPath(["genre"]), .equal, .constant(.string("pop"))))))
        await waitUntil { live.error != nil }
        #expect((live.error as? StoreChainError)?.code == .unknownKeyPath)
        #expect(!live.isLoaded && live.objects.isEmpty)
    }

    @Test func liveObjectFollowsOneObjectUntilItIsDeleted() async throws {
        let album = try #require(try await Album.fetch(context, where: Album.Keys.title == "Shout").first)
        let live = try LiveObject(album)
        await waitUntil { live.isLoaded }
        #expect(live.values?.title == "Shout" && live.values?.year == nil)

        let other = ObjectContext(chain: chain, model: store.model)
        let same = try #require(try await Album.fetch(other, where: Album.Keys.title == "Shout").first)
        try await same.update { $0.year = 1984 }
        try await other.save()
        await waitUntil { live.values?.year == 1984 }

        other.delete(same)
        try await other.save()
        await waitUntil { live.values == nil }
        #expect(live.isLoaded && live.error == nil)
    }

    @Test func anUnsavedObjectCannotBeFollowed() throws {
        let band = try Band.insert(into: context, name: "Grouper")
        let error = #expect(throws: StoreChainError.self) { try LiveObject(band) }
        #expect(error?.code == .invalidRequest)
    }

    /// The update runs on the main actor: `onChange` is called inside it, and checking the
    /// executor (not the thread: the test runner need not keep the main actor on one thread)
    /// stops the test process if it is not the main actor's.
    @Test @MainActor func updatesComeOnTheMainActorWhenAsked() async throws {
        let live = LiveResults(Band.observe(context, sortedBy: [.name]), updatesOnMainActor: true)
        await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
            withObservationTracking {
                _ = live.objects
            } onChange: {
                MainActor.preconditionIsolated("LiveResults applied an update off the main actor")
                done.resume()
            }
        }
        #expect(live.objects.count == 4)
    }

    @Test func releasingItStopsFollowing() async throws {
        var live: LiveResults<Band>? = LiveResults(Band.observe(context))
        if let loading = live { await waitUntil { loading.isLoaded } }
        weak let released = live
        live = nil
        #expect(released == nil, "the task that follows the observation does not keep it alive")
    }
}

/// Waits until `condition` holds, woken by Observation when what it reads changes.
private func waitUntil(_ condition: @escaping @Sendable () -> Bool) async {
    while true {
        let (changes, changed) = AsyncStream.makeStream(of: Void.self)
        let holds = withObservationTracking {
            condition()
        } onChange: {
            changed.finish()
        }
        if holds { return }
        for await _ in changes {}
    }
}
