import AsyncHTTPClient
import NIOCore
import StoreChain

/// Reads an event stream's body by `EventStreamRead`'s rules for `AsyncHTTPClientTransport`:
/// one task reads the chunks (and parses them, only to know where events end), another ends the
/// read when the wait is up or the stream has been quiet after an event; the first to finish
/// ends the other, which closes the connection. Nothing wakes before it must: the watcher sleeps
/// until the wait's end or the first news (an event, or an id that says where the stream
/// stands), then until a quiet moment after the last chunk.
enum EventStreamCollector {
    private struct Progress {
        var body = ByteBuffer()
        var parser = ServerSentEventParser()
        var events = 0
        var lastChunk = ContinuousClock.now

        /// Whether the stream has said something: an event, or where it stands (an id).
        var hasNews: Bool { events > 0 || parser.lastEventID != nil }

        /// Adds a chunk; whether the read may end now because the body is big enough.
        mutating func append(_ chunk: ByteBuffer, read: EventStreamRead) -> Bool {
            body.writeImmutableBuffer(chunk)
            events += parser.consume(chunk.readableBytesView).count
            lastChunk = .now
            return hasNews && body.readableBytes >= read.maxBytes
        }

        /// When the read ends if nothing more arrives.
        func due(_ read: EventStreamRead, end: ContinuousClock.Instant) -> ContinuousClock.Instant {
            hasNews ? min(end, lastChunk + read.quiet) : end
        }
    }

    /// The progress both tasks see.
    private final class Shared: Sendable {
        let progress = Locked(Progress())
    }

    /// The body so far by the rules of `read`; a body over `limit` without news is
    /// `NIOTooManyBytesError`, and a stream that fails before any news rethrows its error.
    static func collect(_ body: HTTPClientResponse.Body, read: EventStreamRead, upTo limit: Int) async throws
        -> ByteBuffer
    {
        let shared = Shared()
        let end = ContinuousClock.now + read.wait
        // Tells the watcher of the first event, which moves the read's end from the wait's end to
        // a quiet moment after the last chunk.
        let (firstEvent, signal) = AsyncStream.makeStream(of: Void.self)
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask {
                do {
                    for try await chunk in body {
                        let (news, full, tooLarge) = shared.progress.withLock { state in
                            let full = state.append(chunk, read: read)
                            return (state.hasNews, full, state.body.readableBytes > limit)
                        }
                        if news { signal.finish() }
                        if full { return }
                        if tooLarge { throw NIOTooManyBytesError(maxBytes: limit) }
                    }
                } catch  where !(error is CancellationError) && shared.progress.withLock({ $0.events > 0 }) {
                    // The connection dropped after complete events: they are the answer, and the
                    // next request resumes after the last of them.
                    return
                }
            }
            group.addTask {
                await withTaskGroup(of: Void.self) { untilFirstEvent in
                    untilFirstEvent.addTask { try? await Task.sleep(until: end, clock: .continuous) }
                    untilFirstEvent.addTask { for await _ in firstEvent {} }
                    await untilFirstEvent.next()
                    untilFirstEvent.cancelAll()
                }
                // The end only moves later as chunks arrive, so sleeping until it and looking
                // again is exact.
                while true {
                    let due = shared.progress.withLock { $0.due(read, end: end) }
                    if ContinuousClock.now >= due { return }
                    try await Task.sleep(until: due, clock: .continuous)
                }
            }
            defer { group.cancelAll() }
            try await group.next()
        }
        return shared.progress.withLock { $0.body }
    }
}
