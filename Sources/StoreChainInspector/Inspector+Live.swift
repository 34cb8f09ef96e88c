import Foundation
import HTTPTypes
import Hummingbird
import NIOCore
import StoreChain

extension Inspector {
    /// The last 50 requests the chain served, newest first, each with its spans.
    func recentRequests() -> [[RecordedSpan]] {
        recorder.recentTraces(50)
    }

    /// Each request the chain finishes, as it finishes: a server-sent event (`request`) whose
    /// data is the request's spans, looked for every 250 ms on the chain's clock; a comment
    /// every 15 s keeps the connection open.
    func liveStream() -> Response {
        var headers = HTTPFields()
        headers[.contentType] = "text/event-stream"
        headers[.cacheControl] = "no-cache"
        let body = ResponseBody { [self] writer in
            let encoder = JSONEncoder()
            var quiet = 0
            var seen = recorder.roots(after: .max).seen
            while !Task.isCancelled {
                let finished: [RecordedSpan]
                (finished, seen) = recorder.roots(after: seen)
                for root in finished {
                    let spans = recorder.trace(root.trace)
                    let data = String(decoding: try encoder.encode(spans), as: UTF8.self)
                    try await writer.write(ByteBuffer(string: "event: request\ndata: \(data)\n\n"))
                }
                quiet = finished.isEmpty ? quiet + 1 : 0
                if quiet >= 60 {
                    quiet = 0
                    try await writer.write(ByteBuffer(string: ": keep-alive\n\n"))
                }
                try await chain.clock.sleep(for: .milliseconds(250))
            }
            try await writer.finish(nil)
        }
        return Response(status: .ok, headers: headers, body: body)
    }
}
