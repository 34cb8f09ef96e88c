import Foundation
import StoreChain
import StoreChainHTTP
import StoreChainTesting
import Testing

/// The remote terminal's event stream held open (`ChangesRequest.stream`): one exchange whose
/// events are handed on as they arrive, counted as their bytes arrive, a silence past the
/// heartbeat timeout taken for a drop, and the connection closed when the reader stops.
@Suite struct RemoteHeldEventStreamTests {
    let model: ObjectModel

    init() throws {
        model = try RemoteFixtures.model()
    }

    /// The feed's `heartbeat-timeout` is its default, 45 s.
    func responder(_ transport: StubTransport) throws -> RemoteResponder {
        try RemoteEventStreamTests.responder(transport, model: model)
    }

    /// A transport whose one stream the test writes, and that counts the connections it closed.
    final class HeldStream: Sendable {
        let body: TransportBodyStream
        let chunks: AsyncThrowingStream<[UInt8], any Error>.Continuation
        let closed = Watched(false)

        init() {
            (body, chunks) = TransportBodyStream.makeStream()
            chunks.onTermination = { [closed] _ in closed.withLock { $0 = true } }
        }

        func write(_ text: String) { chunks.yield(Array(text.utf8)) }

        var transport: StubTransport {
            StubTransport { [body] _ in
                TransportResponse(status: 200, headers: ["content-type": "text/event-stream"], bodyStream: body)
            }
        }
    }

    static func event(_ id: Int) -> String {
        "id: \(id)\ndata: {\"type\": \"album\", \"id\": \(id), \"op\": \"update\"}\n\n"
    }

    func stream(_ responder: RemoteResponder, from cursor: String?, clock: any StoreClock = SystemClock()) async throws
        -> ChangeStream
    {
        let response = try await responder.respond(
            to: .changes(ChangesRequest(cursor: cursor, wait: .seconds(25), stream: true)),
            context: RequestContext(clock: clock))
        guard case .changeStream(let stream) = response.result else {
            throw StoreChainError(.invalidResponse, "expected a stream, got \(response.result)")
        }
        return stream
    }

    @Test(.timeLimit(.minutes(1)))
    func eachEventIsHandedOnAsItArrivesOnOneExchange() async throws {
        let held = HeldStream()
        let transport = held.transport
        let responder = try responder(transport)
        var pages = try await stream(responder, from: "40").makeAsyncIterator()
        let request = try #require(transport.requests.first)
        #expect(request.eventStream?.held == true)
        #expect(request.headers["Last-Event-ID"] == "40")

        held.write(Self.event(41))
        let first = try #require(try await pages.next())
        #expect(first.changes.map(\.id.key) == [.integer(41)])
        #expect(first.cursor == "41")
        // A keep-alive is no page; an event split across chunks is one, once whole.
        let keepAlive = ": keep-alive\n\n"
        held.write(keepAlive)
        let second = Self.event(42)
        held.write(String(second.prefix(20)))
        held.write(String(second.dropFirst(20)))
        let next = try #require(try await pages.next())
        #expect(next.changes.map(\.id.key) == [.integer(42)])
        #expect(next.cursor == "42")
        #expect(transport.requests.count == 1)
        #expect(responder.traffic.requests == 1)
        #expect(
            responder.traffic.bytesReceived == Self.event(41).utf8.count + keepAlive.utf8.count + second.utf8.count,
            "counted as they arrive")

        held.chunks.finish()
        #expect(try await pages.next() == nil, "the backend ended the stream")
    }

    /// A stream that says nothing (no event, no keep-alive) for the heartbeat timeout, by the
    /// chain's clock, is a drop; anything it says moves the timeout on.
    @Test(.timeLimit(.minutes(1)))
    func aStreamSilentPastTheHeartbeatTimeoutIsADrop() async throws {
        let clock = ManualClock()
        let held = HeldStream()
        var pages = try await stream(try responder(held.transport), from: "0", clock: clock).makeAsyncIterator()
        try await clock.waitForSleepers(1)
        await clock.advance(by: .seconds(44))
        held.write(Self.event(1))
        #expect(try await pages.next()?.cursor == "1", "alive at 44 s")
        // At 45 s from the start the watchdog wakes and sleeps again, until 45 s after the event.
        await clock.advance(by: .seconds(1))
        try await clock.waitForSleepers(1)
        #expect(clock.nextDeadline == clock.now.addingTimeInterval(44))
        await clock.advance(by: .seconds(44))
        let error = await #expect(throws: StoreChainError.self) { try await pages.next() }
        #expect(error?.code == .timedOut)
        #expect(error?.message.contains("said nothing for 45") == true)
        #expect(error?.suggestion?.contains("heartbeat-timeout") == true)
        try await held.closed.wait(for: "the connection to close") { $0 }
    }

    /// A stream that never finishes an event (no blank line) is dropped once it has sent 16 MiB,
    /// so one connection cannot fill the memory.
    @Test(.timeLimit(.minutes(1)))
    func aStreamThatNeverFinishesAnEventIsDroppedAtItsBound() async throws {
        let held = HeldStream()
        var pages = try await stream(try responder(held.transport), from: "0").makeAsyncIterator()
        held.write("data: ")
        let megabyte = [UInt8](repeating: UInt8(ascii: "x"), count: 1 << 20)
        for _ in 0..<17 { held.chunks.yield(megabyte) }
        let error = await #expect(throws: StoreChainError.self) { try await pages.next() }
        #expect(error?.code == .invalidResponse)
        #expect(error?.message.contains("without finishing an event") == true)
        try await held.closed.wait(for: "the connection to close") { $0 }
    }

    /// When the reader stops, the connection is closed.
    @Test(.timeLimit(.minutes(1)))
    func theReaderStoppingClosesTheConnection() async throws {
        let held = HeldStream()
        let stream = try await stream(try responder(held.transport), from: "0")
        let reader = Task {
            for try await _ in stream {}
        }
        held.write(Self.event(1))
        reader.cancel()
        try await held.closed.wait(for: "the connection to close") { $0 }
    }

    /// A transport that cannot hold a stream open reads it by the quiet rule: the answer is a
    /// page, and the feed asks again after it.
    @Test func aTransportThatReadsTheWholeBodyAnswersAPage() async throws {
        let transport = StubTransport { _ in
            TransportResponse(
                status: 200, headers: ["content-type": "text/event-stream"], body: Data(Self.event(7).utf8))
        }
        let response = try await responder(transport).respond(
            to: .changes(ChangesRequest(cursor: "6", stream: true)), context: RequestContext())
        #expect(try response.changeFeedPage().cursor == "7")
    }
}
