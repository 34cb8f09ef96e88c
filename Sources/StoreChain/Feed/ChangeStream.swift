/// A change feed held open (a backend's event stream): each page as it arrives, in the backend's
/// order, until the backend ends the stream (the sequence finishes) or the connection drops (it
/// throws, and the feed resumes from the last page's cursor). Read it once; when the reader is
/// cancelled or calls `close()`, the connection is closed.
///
/// A terminal answers `ChangesRequest.stream` with one; `ChangeFeedHandler` reads it:
///
/// ```swift
/// let (stream, pages) = ChangeStream.makeStream(describing: "GET https://api.example/events")
/// pages.yield(ChangeFeedPage(changes: [], cursor: "k-3"))
/// return StoreResponse(.changeStream(stream), info: ResponseInfo(answeredBy: name, origin: .remote))
/// ```
public final class ChangeStream: AsyncSequence, Sendable, Hashable, CustomStringConvertible {
    public typealias Element = ChangeFeedPage

    private let pages: AsyncThrowingStream<ChangeFeedPage, any Error>
    /// Feeds `pages`; finishing it from here ends the stream for the producer too.
    private let feed: AsyncThrowingStream<ChangeFeedPage, any Error>.Continuation
    /// What is streamed, for logs: the request that opened it (no secrets).
    public let description: String

    private init(
        _ pages: AsyncThrowingStream<ChangeFeedPage, any Error>,
        feed: AsyncThrowingStream<ChangeFeedPage, any Error>.Continuation, description: String
    ) {
        self.pages = pages
        self.feed = feed
        self.description = description
    }

    /// A stream and the continuation that feeds it, described (for logs) as `description`; set
    /// the continuation's `onTermination` to close the connection when the reader stops (it is
    /// cancelled, or calls `close()`).
    public static func makeStream(describing description: String) -> (
        stream: ChangeStream, pages: AsyncThrowingStream<ChangeFeedPage, any Error>.Continuation
    ) {
        let (pages, continuation) = AsyncThrowingStream.makeStream(of: ChangeFeedPage.self)
        return (ChangeStream(pages, feed: continuation, description: description), continuation)
    }

    /// Ends the stream: the producer's `onTermination` runs (closing the connection), and what
    /// it would still send is dropped. A reader that stops on its own account, without being
    /// cancelled, calls this.
    public func close() {
        feed.finish()
    }

    public func makeAsyncIterator() -> AsyncThrowingStream<ChangeFeedPage, any Error>.Iterator {
        pages.makeAsyncIterator()
    }

    /// Streams are equal only to themselves: each is one connection.
    public static func == (lhs: ChangeStream, rhs: ChangeStream) -> Bool { lhs === rhs }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(ObjectIdentifier(self))
    }
}
