import Foundation
import StoreChain
import StoreChainDemoBackend
import StoreChainPipeline
import StoreChainTesting
import Testing

/// `query --pipeline`, `explain`, `validate` and `cache` against the demo backend, run as the
/// built executable.
@Suite(.serialized) struct PipelineCommandTests {
    /// The demo's v2 pipeline and model in a fresh folder, with the backend running.
    static func withDemo(_ body: (URL, [String: String], DemoBackend) async throws -> Void) async throws {
        let folder = TemporaryFolder.make("storechain-cli")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        try DemoCatalogModel.text.write(
            to: folder.appending(path: "music.model.yml"), atomically: true, encoding: .utf8)
        try DemoPipelines.v2.write(to: folder.appending(path: "v2.pipeline.yml"), atomically: true, encoding: .utf8)
        let backend = try DemoBackend(bands: 20)
        let port = try await backend.start()
        do {
            try await body(
                folder.appending(path: "v2.pipeline.yml"),
                ["STORECHAIN_DEMO_URL": "http://127.0.0.1:\(port)", "STORECHAIN_CACHE_DIR": folder.path], backend)
        } catch {
            await backend.stop()
            throw error
        }
        await backend.stop()
    }

    @Test func queryThroughAPipelinePrintsJSONAndStats() async throws {
        try await Self.withDemo { pipeline, environment, backend in
            let outcome = try await CommandRunner.run(
                [
                    "query", "--pipeline", pipeline.path, "--entity", "Band", "--where", "name BEGINSWITH[c] 'the'",
                    "--sort", "name", "--format", "json", "--stats",
                ], environment: environment)
            #expect(outcome.status == 0, "\(outcome.stderr)")
            let parsed = try JSONSerialization.jsonObject(with: Data(outcome.stdout.utf8)) as? [[String: Any]]
            let expected = try backend.store.fetch(
                FetchRequest(entity: "Band", predicate: try FetchPredicate("name BEGINSWITH[c] 'the'")))
            guard case .objects(let bands) = expected else { throw StoreChainError(.invalidResponse, "no objects") }
            #expect(
                parsed?.compactMap { $0["id"] as? Int }.sorted()
                    == bands.compactMap { $0.id.key?.description }.compactMap(Int.init).sorted())
            #expect(
                outcome.stderr.contains("stats: answered by remote, cache miss"), "\(outcome.stderr)")
            #expect(outcome.stderr.contains("upstream 1 request(s)"), "\(outcome.stderr)")

            let count = try await CommandRunner.run(
                ["query", "--pipeline", pipeline.path, "--entity", "Track", "--count"], environment: environment)
            #expect(count.stdout == "\(backend.store.snapshot.nodes(of: "Track").count)\n", "\(count.stderr)")
        }
    }

    /// Regression: through the shipped v2 pipeline, the tracks of two albums counted 0 (the
    /// backend answered a list with its first page of every track, and the link onwards was
    /// ignored).
    @Test func theShippedV2PipelineCountsTheTracksOfSeveralAlbums() async throws {
        try await Self.withDemo { pipeline, environment, backend in
            for format in ["album.id == 100", "album.id IN {100, 101}"] {
                let outcome = try await CommandRunner.run(
                    ["query", "--pipeline", pipeline.path, "--entity", "Track", "--where", format, "--count"],
                    environment: environment)
                let expected = try backend.store.fetch(
                    FetchRequest(entity: "Track", predicate: try FetchPredicate(format), resultType: .count))
                guard case .count(let number) = expected, number > 0 else {
                    Issue.record("\(format) has tracks in the catalog")
                    return
                }
                #expect(outcome.stdout == "\(number)\n", "\(format): \(outcome.stderr)")
            }
        }
    }

    @Test func statsCountTheSubRequestsAFetchCaused() async throws {
        try await Self.withDemo { pipeline, environment, _ in
            let outcome = try await CommandRunner.run(
                [
                    "query", "--pipeline", pipeline.path, "--entity", "Album", "--where",
                    "band.name BEGINSWITH[c] 'the'",
                    "--limit", "3", "--stats",
                ], environment: environment)
            #expect(outcome.status == 0, "\(outcome.stderr)")
            #expect(outcome.stderr.contains(/\d+ sub-request\(s\) \(\d+ from caches\)/), "\(outcome.stderr)")
        }
    }

    @Test func explainShowsPushdownAndWhatRunsInMemory() async throws {
        try await Self.withDemo { pipeline, environment, backend in
            backend.resetStats()
            let pushed = try await CommandRunner.run(
                ["explain", "--pipeline", pipeline.path, "--entity", "Band", "--where", "name BEGINSWITH[c] 'the'"],
                environment: environment)
            #expect(pushed.status == 0, "\(pushed.stderr)")
            #expect(pushed.stdout.contains("endpoint: GET /bands/search?name={name}"), "\(pushed.stdout)")
            #expect(pushed.stdout.contains(#"pushed down: name BEGINSWITH[c] "the""#), "\(pushed.stdout)")
            #expect(pushed.stdout.contains("in memory: nothing"), "\(pushed.stdout)")
            #expect(pushed.stdout.contains("5. batching — passed by"), "\(pushed.stdout)")

            let residual = try await CommandRunner.run(
                [
                    "explain", "--pipeline", pipeline.path, "--entity", "Track", "--where", "seconds > 300", "--limit",
                    "10",
                ], environment: environment)
            #expect(
                residual.stdout.contains("endpoint: GET /tracks?page={page}&per_page={per_page}"), "\(residual.stdout)")
            #expect(residual.stdout.contains("in memory: filter: seconds > 300; window: offset 0, limit 10"))
            #expect(residual.stdout.contains("pages of 50 in order until 10 records match"), "\(residual.stdout)")

            let window = try await CommandRunner.run(
                ["explain", "--pipeline", pipeline.path, "--entity", "Track", "--limit", "20", "--offset", "90"],
                environment: environment)
            #expect(window.stdout.contains("2 page(s) of 50: pages 2…3 (page numbers)"), "\(window.stdout)")

            let descending = try await CommandRunner.run(
                ["explain", "--pipeline", pipeline.path, "--entity", "Band", "--sort", "-founded", "--limit", "5"],
                environment: environment)
            #expect(descending.status == 0, "\(descending.stderr)")
            #expect(descending.stdout.contains("fetch Band"), "\(descending.stdout)")

            let count = try await CommandRunner.run(
                ["explain", "--pipeline", pipeline.path, "--entity", "Track", "--count"], environment: environment)
            #expect(count.status == 0, "\(count.stderr)")
            #expect(count.stdout.contains("pages: the first page, when it states the total"), "\(count.stdout)")
            let filteredCount = try await CommandRunner.run(
                ["explain", "--pipeline", pipeline.path, "--entity", "Track", "--where", "seconds > 300", "--count"],
                environment: environment)
            #expect(filteredCount.stdout.contains("so every record is counted"), "\(filteredCount.stdout)")

            // A condition through to-one relationships no endpoint takes: read as keys.
            let narrowed = try await CommandRunner.run(
                [
                    "explain", "--pipeline", pipeline.path, "--entity", "Track", "--where",
                    "album.band.name == 'Rue Royale'",
                ],
                environment: environment)
            #expect(
                narrowed.stdout.contains(
                    #"album.band.name == "Rue Royale" read as album.id among the keys of Album where band.name == "Rue Royale", fetched first"#
                ), "\(narrowed.stdout)")
            #expect(narrowed.stdout.contains("endpoint: GET /tracks?album_id={album}"), "\(narrowed.stdout)")
            #expect(narrowed.stdout.contains("pushed down: album.id IN {keys read first}"), "\(narrowed.stdout)")
            #expect(backend.stats.requests == 0, "explain sends nothing")
        }
    }

    /// A pagination handler without `page-size` is still a pager (the endpoint's own size
    /// applies), and a `Link` endpoint's page size is set by its URL, not by the pager.
    @Test func explainNamesThePagerAndNoSizeForLinkEndpoints() async throws {
        try await Self.withDemo { pipeline, environment, _ in
            let folder = pipeline.deletingLastPathComponent()
            let unsized = folder.appending(path: "unsized.pipeline.yml")
            try """
            extends: v2.pipeline.yml
            handlers:
              - pagination: { max-pages: 10 }
            """.write(to: unsized, atomically: true, encoding: .utf8)
            let paged = try await CommandRunner.run(
                ["explain", "--pipeline", unsized.path, "--entity", "Track", "--limit", "20", "--offset", "90"],
                environment: environment)
            #expect(paged.status == 0, "\(paged.stderr)")
            #expect(paged.stdout.contains("pages: 2 page(s) of 100: pages 1…2 (page numbers)"), "\(paged.stdout)")
            #expect(!paged.stdout.contains("no pagination handler"), "\(paged.stdout)")

            try """
            entities:
              Band:
                key: id
                attributes: { id: integer, name: string }
            """.write(to: folder.appending(path: "bands.model.yml"), atomically: true, encoding: .utf8)
            let linked = folder.appending(path: "linked.pipeline.yml")
            try """
            model: bands.model.yml
            handlers:
              - pagination: { page-size: 50 }
            terminal:
              remote:
                base-url: https://api.example
                entities:
                  Band:
                    fetch:
                      - request: GET /bands?per_page=100
                        paging: link
            """.write(to: linked, atomically: true, encoding: .utf8)
            let link = try await CommandRunner.run(
                ["explain", "--pipeline", linked.path, "--entity", "Band"], environment: environment)
            #expect(link.status == 0, "\(link.stderr)")
            #expect(link.stdout.contains("pages: every page (link; no limit)"), "\(link.stdout)")
        }
    }

    /// A pipeline that names a handler type of the app's own: every command takes it with
    /// `--ignore-type` (the handler is passed through); without, the error says how.
    @Test func commandsLoadAPipelineWithTheAppsOwnHandlerType() async throws {
        try await Self.withDemo { pipeline, environment, _ in
            let own = pipeline.deletingLastPathComponent().appending(path: "own.pipeline.yml")
            try String(contentsOf: pipeline, encoding: .utf8).replacingOccurrences(
                of: "handlers:\n", with: "handlers:\n  - app-signing: { key-id: k1 }\n"
            ).write(to: own, atomically: true, encoding: .utf8)
            let arguments = ["--pipeline", own.path, "--entity", "Band", "--where", "name BEGINSWITH[c] 'the'"]
            let refused = try await CommandRunner.run(["query"] + arguments, environment: environment)
            #expect(refused.status != 0)
            #expect(refused.stderr.contains("--ignore-type app-signing"), "\(refused.stderr)")
            for command in ["query", "explain"] {
                let outcome = try await CommandRunner.run(
                    [command] + arguments + ["--ignore-type", "app-signing"], environment: environment)
                #expect(outcome.status == 0, "\(command): \(outcome.stderr)")
            }
            let stats = try await CommandRunner.run(
                ["cache", "stats", "--pipeline", own.path, "--ignore-type", "app-signing"], environment: environment)
            #expect(stats.status == 0, "\(stats.stderr)")
        }
    }

    @Test func validateExitCodesForGoodAndBadFiles() async throws {
        try await Self.withDemo { pipeline, environment, _ in
            let good = try await CommandRunner.run(
                ["validate", pipeline.path, "Examples/Bandcamp/music.model.yml"], environment: environment)
            #expect(good.status == 0, "\(good.stderr)")
            #expect(good.stdout.contains("ok: \(pipeline.path)"))
            let bad = try await CommandRunner.run(
                ["validate", "Tests/StoreChainPipelineTests/Fixtures/errors/unknown-option.yml", pipeline.path],
                environment: environment)
            #expect(bad.status == 1)
            #expect(bad.stderr.contains("unknown-option.yml:5:7: handlers[0].memory-cache.max-object: unknown option"))
            #expect(bad.stdout.contains("ok: \(pipeline.path)"), "the other file is still checked")
            let unset = try await CommandRunner.run(["validate", pipeline.path])
            #expect(unset.status == 1)
            #expect(unset.stderr.contains("STORECHAIN_DEMO_URL is not set"), "\(unset.stderr)")
        }
    }

    @Test func badFlagsAndBadFilesGiveClearErrors() async throws {
        let both = try await CommandRunner.run(
            ["query", "--pipeline", "x.yml", "--model", "m.yml", "--data", "d.json", "--entity", "Band"])
        #expect(both.status != 0)
        #expect(both.stderr.contains("give either --pipeline FILE, or --model FILE with --data FILE"))
        let missing = try await CommandRunner.run(["query", "--pipeline", "no-such.pipeline.yml", "--entity", "Band"])
        #expect(missing.status == 1)
        #expect(missing.stderr.contains("no-such.pipeline.yml: cannot read the pipeline file"), "\(missing.stderr)")
        let policy = try await CommandRunner.run(
            [
                "query", "--model", "Examples/Music/music.model.yml", "--data", "Examples/Music/music.json", "--entity",
                "Band", "--policy", "sometimes",
            ])
        #expect(policy.status == 1)
        #expect(policy.stderr.contains("--policy: unknown cache policy 'sometimes'"), "\(policy.stderr)")
    }

    @Test func cacheStatsAndClear() async throws {
        try await Self.withDemo { pipeline, environment, _ in
            _ = try await CommandRunner.run(
                ["query", "--pipeline", pipeline.path, "--entity", "Album", "--limit", "30"], environment: environment)
            let stats = try await CommandRunner.run(
                ["cache", "stats", "--pipeline", pipeline.path], environment: environment)
            #expect(stats.status == 0, "\(stats.stderr)")
            #expect(stats.stdout.contains("    Album: 30"), "\(stats.stdout)")
            #expect(stats.stdout.contains("queries: 1"), "\(stats.stdout)")
            let clear = try await CommandRunner.run(
                ["cache", "clear", "--pipeline", pipeline.path], environment: environment)
            #expect(clear.status == 0 && clear.stdout.contains("cleared"), "\(clear.stderr)")
            let after = try await CommandRunner.run(
                ["cache", "stats", "--pipeline", pipeline.path], environment: environment)
            #expect(after.stdout.contains("objects: 0") && after.stdout.contains("queries: 0"), "\(after.stdout)")
        }
    }
}
