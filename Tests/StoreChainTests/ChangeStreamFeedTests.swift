import Foundation
@_spi(Internals) import StoreChain
import StoreChainTesting
import Testing

/// A terminal whose change feed answers with streams held open (as an event stream does): each
/// request for changes opens a connection whose pages the test yields and ends.
private final class StreamingFeed: Sendable {
    struct Connection: Sendable {
        let cursor: String?
        let stream: Bool
        let pages: AsyncThrowingStream<ChangeFeedPage, any Error>.Continuation
    }

    private struct State {
        var connections: [Connection] = []
        var closed = 0
    }

    private let state = Watched(State())
    let terminal: RecordingResponder

    init(store: InMemoryStore) {
        let state = self.state
        terminal = RecordingResponder(name: "streaming-feed") { request, context in
            guard case .changes(let changes) = request else {
                return try await store.respond(to: request, context: context)
            }
            let (stream, pages) = ChangeStream.makeStream(describing: "the test's stream")
            pages.onTermination = { _ in state.withLock { $0.closed += 1 } }
            state.withLock {
                $0.connections.append(Connection(cursor: changes.cursor, stream: changes.stream, pages: pages))
            }
            return StoreResponse(
                .changeStream(stream), info: ResponseInfo(answeredBy: "streaming-feed", origin: .remote))
        }
    }

    /// The `number`th connection (from 1), once the feed has opened it.
    func connection(_ number: Int) async throws -> Connection {
        try await state.wait(for: "connection \(number) to open") { $0.connections.count >= number }
        return state.withLock { $0.connections[number - 1] }
    }

    var connections: Int { state.withLock { $0.connections.count } }

    /// Returns once `count` connections have been closed by their reader.
    func waitForClosed(_ count: Int) async throws {
        try await state.wait(for: "\(count) connection(s) to be closed") { $0.closed >= count }
    }
}

/// The change feed over a stream held open: every page applied as it arrives on one connection;
/// after a drop, one new connection from the last page's cursor after the backend's reconnection
/// time; after the backend ends the stream, one at once; shutting down closes it.
@Suite struct ChangeStreamFeedTests {
    let store: InMemoryStore
    let clock = ManualClock()

    init() throws {
        store = try Fixtures.store()
    }

    func album(_ key: Int) -> ObjectID { ObjectID(entity: "Album", key: .integer(key)) }

    func page(_ key: Int, cursor: String) -> ChangeFeedPage {
        ChangeFeedPage(changes: [FeedChange(.update, album(key))], cursor: cursor)
    }

    @Test(.timeLimit(.minutes(1)))
    func aStreamIsAppliedPageByPageOnOneConnectionAndResumedWhereItStopped() async throws {
        let feed = StreamingFeed(store: store)
        let chain = Chain(
            handlers: [ChangeFeedHandler(options: ChangeFeedOptions(retryBaseDelay: .seconds(1)), jitter: { $0 })],
            terminal: feed.terminal, clock: clock)
        var events = chain.events.subscribe().makeAsyncIterator()

        let first = try await feed.connection(1)
        #expect(first.cursor == nil && first.stream, "a stream from the current position")
        first.pages.yield(ChangeFeedPage(changes: [], cursor: "c0"))
        first.pages.yield(page(1, cursor: "c1"))
        #expect(await events.next()?.updated == [album(1)])
        first.pages.yield(page(2, cursor: "c2"))
        #expect(await events.next()?.updated == [album(2)])
        #expect(feed.connections == 1, "each page arrives on the same connection")

        // A drop: the feed waits the reconnection time the stream asked for, then resumes.
        first.pages.yield(ChangeFeedPage(changes: [], cursor: "c2", reconnectionTime: .seconds(3)))
        first.pages.finish(throwing: StoreChainError(.transport, "the connection was reset"))
        try await clock.waitForSleepers(1)
        #expect(clock.nextDeadline == clock.now.addingTimeInterval(3))
        #expect(feed.connections == 1)
        await clock.advance(by: .seconds(3))
        let second = try await feed.connection(2)
        #expect(second.cursor == "c2" && second.stream)
        second.pages.yield(page(3, cursor: "c3"))
        #expect(await events.next()?.updated == [album(3)], "nothing lost, nothing repeated")

        // The backend ends the stream: asked again at once, from where it stopped.
        second.pages.finish()
        let third = try await feed.connection(3)
        #expect(third.cursor == "c3")
        try await feed.waitForClosed(2)
        await chain.shutdown(cancelling: true)
        try await feed.waitForClosed(3)
    }

    /// A backend that ends the stream before it says anything is asked again only after a
    /// backoff, not in a loop.
    @Test(.timeLimit(.minutes(1)))
    func aStreamEndedAtOnceIsAskedForAgainAfterABackoff() async throws {
        let feed = StreamingFeed(store: store)
        let chain = Chain(
            handlers: [ChangeFeedHandler(options: ChangeFeedOptions(retryBaseDelay: .seconds(2)), jitter: { $0 })],
            terminal: feed.terminal, clock: clock)
        let first = try await feed.connection(1)
        first.pages.yield(ChangeFeedPage(changes: [], cursor: "c0"))
        first.pages.finish()
        let second = try await feed.connection(2)
        #expect(second.cursor == "c0", "a stream that said something is asked for again at once")
        second.pages.finish()
        try await clock.waitForSleepers(1)
        #expect(clock.nextDeadline == clock.now.addingTimeInterval(2))
        #expect(feed.connections == 2)
        await clock.advance(by: .seconds(2))
        _ = try await feed.connection(3)
        await chain.shutdown(cancelling: true)
    }
}
