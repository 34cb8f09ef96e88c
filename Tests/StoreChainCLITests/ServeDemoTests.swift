import Foundation
import StoreChain
import StoreChainDemoBackend
import StoreChainHTTP
import StoreChainPipeline
import StoreChainTesting
import Testing

@Suite struct ServeDemoTests {
    @Test func servesTheDemoBackendStandalone() async throws {
        let process = Process()
        process.executableURL = try CommandRunner.executable()
        process.arguments = [
            "serve-demo", "--port", "0", "--bands", "3", "--etags", "--max-age", "60", "--churn", "50",
        ]
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        defer { process.terminate() }
        // The first line names the address; read it off the test's threads, and give up after
        // a while rather than hang.
        let reader = output.fileHandleForReading
        let text = await withCheckedContinuation { (continuation: CheckedContinuation<String, Never>) in
            DispatchQueue.global().async {
                var text = ""
                while !text.contains("Ctrl-C") {
                    let chunk = reader.availableData
                    if chunk.isEmpty { break }
                    text += String(decoding: chunk, as: UTF8.self)
                }
                continuation.resume(returning: text)
            }
            DispatchQueue.global().asyncAfter(deadline: .now() + 60) { process.terminate() }
        }
        let address = try #require(text.split(separator: "\n").first?.split(separator: " ").last)
        let base = try #require(URL(string: String(address)))
        #expect(base.host == "127.0.0.1")
        let model = try ModelFile.parse(DemoCatalogModel.text)
        let v2 = try RemoteResponder(model: model, options: DemoRemoteOptions.v2(baseURL: base))
        let count = try await v2.respondInAChain(
            to: .fetch(FetchRequest(entity: "Band", resultType: .count)), context: RequestContext())
        #expect(try count.fetchResult() == .count(3))
        #expect(text.contains("quirks: ETags with 304, max-age=60"), "\(text)")
        #expect(text.contains("/v2/tracks?album_id=1,2") && text.contains("/v3/bands/{id}/albums"))
        #expect(
            text.contains("/v2/changes?since=") && text.contains("/v2/events")
                && text.contains("churn: 50.0 changes a second"), "\(text)")
        // The churn changes records, and the change feed tells of it.
        let now = try await v2.respondInAChain(to: .changes(ChangesRequest(cursor: nil)), context: RequestContext())
        let changes = try await v2.respondInAChain(
            to: .changes(ChangesRequest(cursor: try now.changeFeedPage().cursor, wait: .seconds(20))),
            context: RequestContext())
        #expect(try !changes.changeFeedPage().changes.isEmpty)
        let headers = try #require(count.info.http?.headers)
        let names = Set(headers.keys.map { $0.lowercased() })
        #expect(
            names.contains("etag")
                && headers.contains { $0.key.lowercased() == "cache-control" && $0.value == "max-age=60" }, "\(headers)"
        )
    }

    @Test(arguments: [
        (["--fail-every", "0"], "--fail-every 0: expected a positive number"),
        (["--latency=-1"], "--latency -1: expected zero or more"),
        (["--churn", "0"], "--churn 0.0: expected changes per second"),
    ])
    func aQuirkOptionOutOfRangeIsRefusedNamingIt(arguments: [String], message: String) async throws {
        let result = try await CommandRunner.run(["serve-demo"] + arguments)
        #expect(result.status != 0)
        #expect(result.stderr.contains(message), "\(result.stderr)")
    }
}
