import Foundation
import StoreChain
import StoreChainDemoBackend
import Testing

/// `save` and `outbox` against the demo backend, run as the built executable: saves made while
/// the backend fails are kept, listed, and sent once when it answers again.
@Suite(.serialized) struct OutboxCommandTests {
    /// The v2 pipeline with an outbox in place of its caches and pagination.
    static func offlinePipeline(beside v2: URL) throws -> String {
        let url = v2.deletingLastPathComponent().appending(path: "offline.pipeline.yml")
        try """
        extends: v2.pipeline.yml
        handlers:
          - memory-cache: { ttl: 5m }
          - outbox: { path: data/outbox.sqlite, retry-delay: 1h }
          - retry: { attempts: 1 }
        """.write(to: url, atomically: true, encoding: .utf8)
        return url.path
    }

    private static func json(_ text: String) -> [String: Any] {
        (try? JSONSerialization.jsonObject(with: Data(text.utf8))) as? [String: Any] ?? [:]
    }

    @Test func savesKeptWhileTheBackendFailsAreListedAndReplayedOnce() async throws {
        try await PipelineCommandTests.withDemo { v2, environment, backend in
            let pipeline = try Self.offlinePipeline(beside: v2)
            func run(_ arguments: [String]) async throws -> CommandRunner.Outcome {
                try await CommandRunner.run(arguments, environment: environment)
            }
            let bands = backend.store.snapshot.nodes(of: "Band").count
            backend.setQuirks(DemoQuirks(failEvery: 1))

            let insert = try await run([
                "save", "--pipeline", pipeline, "--entity", "Band", "--insert",
                #"{"name": "Low Tide", "founded": "2019-04-01T00:00:00Z"}"#,
            ])
            #expect(insert.status == 0, "\(insert.stderr)")
            let inserted = Self.json(insert.stdout)
            #expect(inserted["state"] as? String == "pending" && inserted["kind"] as? String == "insert")
            #expect((inserted["id"] as? String)?.hasPrefix("Band/temp:") == true, "\(insert.stdout)")
            #expect((inserted["object"] as? [String: Any])?["name"] as? String == "Low Tide")
            let update = try await run([
                "save", "--pipeline", pipeline, "--entity", "Album", "--update", "100", #"{"price": 9.5}"#,
            ])
            #expect(Self.json(update.stdout)["state"] as? String == "pending", "\(update.stdout) \(update.stderr)")

            let list = try await run(["outbox", "list", "--pipeline", pipeline, "--format", "json"])
            let entries = (try? JSONSerialization.jsonObject(with: Data(list.stdout.utf8))) as? [[String: Any]]
            #expect(entries?.map { $0["kind"] as? String } == ["insert", "update"], "\(list.stdout) \(list.stderr)")
            #expect(entries?.allSatisfy { $0["state"] as? String == "pending" } == true)
            let stuck = try await run(["outbox", "replay", "--pipeline", pipeline])
            #expect(stuck.status != 0 && stuck.stderr.contains("2 save(s) could not be sent yet"), "\(stuck.stderr)")

            backend.setQuirks(.none)
            let replay = try await run(["outbox", "replay", "--pipeline", pipeline])
            #expect(replay.status == 0, "\(replay.stderr)")
            #expect(replay.stdout == "sent 2, still pending 0, failed 0\n")
            let snapshot = backend.store.snapshot
            #expect(snapshot.nodes(of: "Band").count == bands + 1)
            #expect(snapshot.nodes(of: "Band").filter { $0[attribute: "name"] == .string("Low Tide") }.count == 1)
            #expect(snapshot.node(for: ObjectID(entity: "Album", key: 100))?[attribute: "price"] == .double(9.5))
            let empty = try await run(["outbox", "list", "--pipeline", pipeline])
            #expect(empty.stdout == "the outbox is empty\n", "\(empty.stderr)")
            let again = try await run(["outbox", "replay", "--pipeline", pipeline])
            #expect(again.stdout == "sent 0, still pending 0, failed 0\n" && again.status == 0)
            #expect(backend.store.snapshot.nodes(of: "Band").count == bands + 1, "nothing is sent twice")
        }
    }

    @Test func mistakesAreClearErrors() async throws {
        try await PipelineCommandTests.withDemo { v2, environment, _ in
            let pipeline = try Self.offlinePipeline(beside: v2)
            let cases: [([String], String)] = [
                (["save", "--pipeline", pipeline, "--entity", "Bnd", "--delete", "1"], "did you mean 'Band'?"),
                (
                    ["save", "--pipeline", pipeline, "--entity", "Band", "--insert", #"{"nme": "x"}"#],
                    "--insert: $.nme"
                ),
                (
                    ["save", "--pipeline", pipeline, "--entity", "Band", "--update", "x", "{}"],
                    "--update"
                ),
                (["save", "--pipeline", pipeline, "--entity", "Band"], "give one of --insert JSON"),
                (["outbox", "discard", "7", "--pipeline", pipeline], "holds no entry 7"),
                (["outbox", "list", "--pipeline", v2.path], "has no outbox handler"),
            ]
            for (arguments, message) in cases {
                let outcome = try await CommandRunner.run(arguments, environment: environment)
                #expect(outcome.status != 0, "\(arguments)")
                #expect(outcome.stderr.contains(message), "\(arguments): \(outcome.stderr)")
            }
        }
    }
}
