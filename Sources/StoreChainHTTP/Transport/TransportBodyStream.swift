/// A response body handed on as it arrives (an event stream held open, `EventStreamRead.held`):
/// each chunk of bytes in order, until the body ends (the sequence finishes) or the connection
/// fails (it throws). Read it once; when the reader is cancelled or calls `close()`, the
/// transport closes the connection.
///
/// ```swift
/// let (body, chunks) = TransportBodyStream.makeStream()
/// chunks.yield(Array("id: 7\ndata: {}\n\n".utf8))
/// var response = TransportResponse(status: 200, headers: ["content-type": "text/event-stream"])
/// response.bodyStream = body
/// ```
public final class TransportBodyStream: AsyncSequence, Sendable, Hashable {
    public typealias Element = [UInt8]

    private let chunks: AsyncThrowingStream<[UInt8], any Error>
    /// Feeds `chunks`; finishing it from here ends the body for the producer too.
    private let feed: AsyncThrowingStream<[UInt8], any Error>.Continuation
    /// Called with each chunk as it is read (the exchange counts the bytes received this way).
    private let observe: (@Sendable ([UInt8]) -> Void)?

    private init(
        _ chunks: AsyncThrowingStream<[UInt8], any Error>, feed: AsyncThrowingStream<[UInt8], any Error>.Continuation,
        observe: (@Sendable ([UInt8]) -> Void)?
    ) {
        self.chunks = chunks
        self.feed = feed
        self.observe = observe
    }

    /// A body and the continuation that feeds it; set the continuation's `onTermination` to
    /// close the connection when the reader stops or calls `close()`.
    public static func makeStream() -> (
        body: TransportBodyStream, chunks: AsyncThrowingStream<[UInt8], any Error>.Continuation
    ) {
        let (chunks, continuation) = AsyncThrowingStream.makeStream(of: [UInt8].self)
        return (TransportBodyStream(chunks, feed: continuation, observe: nil), continuation)
    }

    /// Ends the body: the producer's `onTermination` runs (closing the connection), and what it
    /// would still send is dropped. A reader that stops on its own account, without being
    /// cancelled, calls this.
    public func close() {
        feed.finish()
    }

    /// The same body, with `observe` also called on each chunk as it is read.
    func observing(_ observe: @escaping @Sendable ([UInt8]) -> Void) -> TransportBodyStream {
        let earlier = self.observe
        return TransportBodyStream(chunks, feed: feed) { chunk in
            earlier?(chunk)
            observe(chunk)
        }
    }

    /// Reads the chunks in order.
    public struct AsyncIterator: AsyncIteratorProtocol {
        var base: AsyncThrowingStream<[UInt8], any Error>.Iterator
        let observe: (@Sendable ([UInt8]) -> Void)?

        public mutating func next() async throws -> [UInt8]? {
            try await next(isolation: #isolation)
        }

        public mutating func next(isolation actor: isolated (any Actor)?) async throws -> [UInt8]? {
            let chunk = try await base.next(isolation: actor)
            if let chunk { observe?(chunk) }
            return chunk
        }
    }

    public func makeAsyncIterator() -> AsyncIterator {
        AsyncIterator(base: chunks.makeAsyncIterator(), observe: observe)
    }

    /// Bodies are equal only to themselves: each is one connection's.
    public static func == (lhs: TransportBodyStream, rhs: TransportBodyStream) -> Bool { lhs === rhs }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(ObjectIdentifier(self))
    }
}
