import Foundation
import HTTPTypes
import Hummingbird
import NIOCore
import StoreChain

extension Inspector {
    /// The last 50 requests the chain served, newest first.
    func recentRequests() -> [RecordedRequest] {
        recorder.recentRequests(50)
    }

    /// Each request the chain finishes, as it finishes: a server-sent event (`request`) whose
    /// data is the request (with its spans when the console ran it), looked for every 250 ms on
    /// the chain's clock; a comment every 15 s keeps the connection open.
    func liveStream() -> Response {
        var headers = HTTPFields()
        headers[.contentType] = "text/event-stream"
        headers[.cacheControl] = "no-cache"
        let body = ResponseBody { [self] writer in
            let encoder = JSONEncoder()
            var quiet = 0
            var seen = recorder.requests(after: .max).seen
            while !Task.isCancelled {
                let finished: [RecordedRequest]
                (finished, seen) = recorder.requests(after: seen)
                for request in finished {
                    let data = String(decoding: try encoder.encode(request), as: UTF8.self)
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
