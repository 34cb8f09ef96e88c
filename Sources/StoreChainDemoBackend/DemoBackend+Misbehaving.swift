import Foundation
import HTTPTypes
import Hummingbird
import NIOCore

/// Routes that misbehave at the HTTP level, always on, for the reliability tests: a client must
/// end every one of them with a typed error within its deadline.
///
/// - `/bad/truncated`: promises 4,096 bytes, sends 40, closes the connection.
/// - `/bad/never-ends`: sends the head and one chunk, then nothing, for an hour.
/// - `/bad/huge`: 16 MB of valid JSON (a larger body than clients should accept).
/// - `/bad/html`: an HTML error page with status 200.
/// - `/bad/deep`: an array nested 100,000 deep.
/// - `/bad/moved`: 301 to `/v2/bands` (a template the backend serves elsewhere: one request more
///   each time, which the client must count).
/// - `/bad/event-burst?count=N`: an event stream of N changes to albums 1…N (ids 1…N, each with
///   a 200-character note), as fast as it can write them, after `Last-Event-ID` when given; then
///   it stays open, silent, for an hour.
extension DemoBackend {
    func addMisbehavingRoutes(to router: Router<BasicRequestContext>) {
        router.get("/bad/event-burst") { request, _ in
            _ = self.admit("/bad/event-burst")
            let count = request.uri.queryParameters.get("count", as: Int.self) ?? 10_000
            let after = HTTPField.Name("Last-Event-ID").flatMap { request.headers[$0] }.flatMap { Int($0) } ?? 0
            var headers = HTTPFields()
            headers[.contentType] = "text/event-stream"
            let note = String(repeating: "n", count: 200)
            return Response(
                status: .ok, headers: headers,
                body: ResponseBody { writer in
                    var number = after + 1
                    while number <= count {
                        var text = ""
                        for id in number...min(count, number + 99) {
                            text +=
                                "id: \(id)\ndata: {\"type\": \"album\", \"id\": \(id), \"op\": \"update\", \"note\": \"\(note)\"}\n\n"
                        }
                        try await writer.write(ByteBuffer(string: text))
                        number += 100
                    }
                    try await Task.sleep(for: .seconds(3_600))
                    try await writer.finish(nil)
                })
        }
        router.get("/bad/moved") { _, _ in
            _ = self.admit("/bad/moved")
            var headers = HTTPFields()
            headers[.location] = "/v2/bands"
            return Response(status: .movedPermanently, headers: headers)
        }
        router.get("/bad/truncated") { _, _ in
            _ = self.admit("/bad/truncated")
            var headers = HTTPFields()
            headers[.contentType] = "application/json"
            return Response(
                status: .ok, headers: headers,
                body: ResponseBody(contentLength: 4_096) { writer in
                    try await writer.write(ByteBuffer(string: #"{"data": [{"id": 1, "attributes": {"na"#))
                    throw MisbehaviourError.cutOff
                })
        }
        router.get("/bad/never-ends") { _, _ in
            _ = self.admit("/bad/never-ends")
            var headers = HTTPFields()
            headers[.contentType] = "application/json"
            return Response(
                status: .ok, headers: headers,
                body: ResponseBody { writer in
                    try await writer.write(ByteBuffer(string: #"{"data": ["#))
                    try await Task.sleep(for: .seconds(3_600))
                    try await writer.finish(nil)
                })
        }
        router.get("/bad/huge") { _, _ in
            _ = self.admit("/bad/huge")
            var headers = HTTPFields()
            headers[.contentType] = "application/json"
            let chunk = ByteBuffer(string: String(repeating: #"{"id": 1, "attributes": {"name": "x"}},"#, count: 1_600))
            return Response(
                status: .ok, headers: headers,
                body: ResponseBody { writer in
                    try await writer.write(ByteBuffer(string: #"{"data": ["#))
                    for _ in 0..<(16 << 20) / chunk.readableBytes { try await writer.write(chunk) }
                    try await writer.write(ByteBuffer(string: #"{"id": 2, "attributes": {"name": "y"}}]}"#))
                    try await writer.finish(nil)
                })
        }
        router.get("/bad/html") { _, _ in
            _ = self.admit("/bad/html")
            var headers = HTTPFields()
            headers[.contentType] = "text/html; charset=utf-8"
            let page = "<html><head><title>502 Bad Gateway</title></head><body>upstream down</body></html>"
            return Response(status: .ok, headers: headers, body: .init(byteBuffer: ByteBuffer(string: page)))
        }
        router.get("/bad/deep") { _, _ in
            _ = self.admit("/bad/deep")
            let depth = 100_000
            return self.raw(
                #"{"data": "# + String(repeating: "[", count: depth) + String(repeating: "]", count: depth) + "}",
                status: .ok)
        }
    }
}

enum MisbehaviourError: Error {
    /// Ends a response early, which closes the connection mid-body.
    case cutOff
}
