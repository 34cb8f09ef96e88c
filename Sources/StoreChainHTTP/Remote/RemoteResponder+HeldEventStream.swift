import Foundation
@_spi(Internals) import StoreChain

extension RemoteResponder {
    /// The most bytes a stream held open may send without finishing an event (or saying where it
    /// stands) before it is dropped: it bounds what one connection holds in memory.
    static let maxUnfinishedEventBytes = 16 << 20

    /// An event stream held open, as pages: each chunk's whole events (or a new id) one page as it
    /// arrives. The stream ends when the backend ends the body, and throws when the connection
    /// drops or says nothing for the feed's `heartbeat-timeout` (by the chain's clock); the
    /// reader stopping closes the connection.
    func following(
        _ body: TransportBodyStream, from url: URL, asked cursor: String?, feed: RemoteChangesOptions,
        context: RequestContext
    ) -> ChangeStream {
        let source = RemoteError.redacted(url)
        let (stream, pages) = ChangeStream.makeStream(describing: "the event stream \(source)")
        let clock = context.clock
        // When the stream last said something.
        let heard = Watched(clock.now)
        let reading = Task {
            do {
                try await withThrowingTaskGroup(of: Void.self) { group in
                    group.addTask {
                        var parser = ServerSentEventParser()
                        var cursor = cursor
                        // Bytes read since the stream last said something whole.
                        var unfinished = 0
                        for try await chunk in body {
                            heard.withLock { $0 = clock.now }
                            let events = parser.consume(chunk)
                            let page = self.eventStreamPage(
                                events, parsed: parser, asked: cursor, source: source, feed: feed, context: context)
                            guard !events.isEmpty || page.cursor != cursor else {
                                unfinished += chunk.count
                                if unfinished > Self.maxUnfinishedEventBytes {
                                    throw StoreChainError(
                                        .invalidResponse,
                                        "the event stream \(source) sent \(unfinished) bytes without finishing an event; it is dropped",
                                        at: .init(path: source),
                                        suggestion: "check that the backend ends each event with a blank line")
                                }
                                continue
                            }
                            unfinished = 0
                            cursor = page.cursor
                            pages.yield(page)
                        }
                    }
                    group.addTask {
                        // Sleeps until the stream has been silent for the timeout; each chunk
                        // moves that moment later.
                        while true {
                            let due = heard.withLock { $0 }.addingTimeInterval(feed.heartbeatTimeout.timeInterval)
                            if clock.now >= due {
                                throw StoreChainError(
                                    .timedOut,
                                    "the event stream \(source) said nothing for \(feed.heartbeatTimeout) (no event, no keep-alive); it is taken for a drop",
                                    at: .init(path: source),
                                    suggestion:
                                        "raise the change feed's 'heartbeat-timeout' above the backend's keep-alive interval"
                                )
                            }
                            try await clock.sleep(until: due)
                        }
                    }
                    defer { group.cancelAll() }
                    try await group.next()
                }
                pages.finish()
            } catch {
                pages.finish(throwing: error)
            }
            // However the reading ended, the connection is not read again.
            body.close()
        }
        pages.onTermination = { _ in reading.cancel() }
        return stream
    }
}
