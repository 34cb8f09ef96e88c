import Foundation
import HTTPTypes
import Hummingbird
import NIOCore
import StoreChain

extension DemoBackend {
    /// `GET /v2/events` (and `/v3/events`): the change log as server-sent events
    /// (`text/event-stream`), open until the client leaves or the backend stops. Each change is an
    /// event whose id resumes after it and whose data is the change as `GET /v2/changes` lists
    /// it; a comment every 15 s keeps the connection alive. With `Last-Event-ID` (or `?since=`) the stream starts after that change;
    /// without, it starts with an event of no data whose id says where the log stands. An id
    /// older than the kept window, or from another run, gets a `gap` event with the current id.
    ///
    /// ```text
    /// id: k3x9-12
    /// data: {"type": "album", "id": 7, "op": "update", "record": {"id": 7, …}}
    /// ```
    func events(_ request: Request, route: String) async throws -> Response {
        let quirks = self.quirks.withLock { $0 }
        if quirks.latency > .zero { try await Task.sleep(for: quirks.latency) }
        if let refusal = busyAnswer(route) { return refusal }
        let asked =
            HTTPField.Name("Last-Event-ID").flatMap { request.headers[$0] } ?? request.uri.queryParameters.get("since")
        var headers = HTTPFields()
        headers[.contentType] = "text/event-stream"
        headers[.cacheControl] = "no-cache"
        let body = ResponseBody { writer in
            var cursor = asked ?? self.changeLog.cursor
            var sent = 0
            if asked == nil { try await writer.write(self.counted("retry: 1000\nid: \(cursor)\n\n")) }
            self.counters.withLock { $0.eventStreamsFollowing += 1 }
            defer { self.counters.withLock { $0.eventStreamsFollowing -= 1 } }
            while !Task.isCancelled, !self.changeLog.isClosed {
                switch await self.changeLog.changes(after: cursor, limit: 500, wait: .seconds(15)) {
                case .gap(let current):
                    cursor = current
                    let gap = #"{"error": "the changes after Last-Event-ID are no longer kept"}"#
                    try await writer.write(self.counted("id: \(current)\nevent: gap\ndata: \(gap)\n\n"))
                case .changes(let entries, let next) where entries.isEmpty:
                    cursor = next
                    if !self.changeLog.isClosed { try await writer.write(self.counted(": keep-alive\n\n")) }
                case .changes(let entries, let next):
                    cursor = next
                    var text = ""
                    for (entry, change) in zip(entries, self.changesJSON(entries)) {
                        if let drop = quirks.dropEventStreamAfter, sent == drop {
                            // Half of the next event, then the connection ends.
                            try await writer.write(
                                self.counted(text + "id: \(self.changeLog.cursor(of: entry))\ndata: {\"ty"))
                            try await writer.finish(nil)
                            return
                        }
                        text +=
                            "id: \(self.changeLog.cursor(of: entry))\ndata: \(change.description)\n\n"
                        sent += 1
                    }
                    try await writer.write(self.counted(text))
                }
            }
            try await writer.finish(nil)
        }
        return Response(status: .ok, headers: headers, body: body)
    }

    /// `text` as a buffer to send, counted in the backend's bytes sent.
    private func counted(_ text: String) -> ByteBuffer {
        countBytes(text.utf8.count)
        return ByteBuffer(string: text)
    }
}
