import Foundation
import InMemoryTracing
import StoreChain
import StoreChainPipeline
import Testing

/// The pipeline file's `tracing:` key: on with the tracer there is, off when it says so, values
/// redacted unless it says otherwise, inherited through `extends:`, and checked like any option.
@Suite struct TracingPipelineTests {
    static let fixtures = PipelineFileTests.fixtures

    func pipeline(_ tracing: String, source: String = "traced.yml") throws -> Pipeline {
        try Pipeline.parse(
            """
            model: music.model.yml
            \(tracing)
            terminal:
              in-memory: { records: music.json }
            """, source: source, directory: Self.fixtures)
    }

    /// The finished fetch span of one fetch through a chain of `pipeline` traced by a fresh tracer.
    func fetchSpan(_ pipeline: Pipeline) async throws -> FinishedInMemorySpan? {
        let tracer = InMemoryTracer()
        let chain = pipeline.makeChain(tracer: tracer)
        _ = try await chain.fetch(FetchRequest(entity: "Band", predicate: try FetchPredicate("name == 'Low'")))
        await chain.shutdown()
        return tracer.finishedSpans.first { $0.operationName == "storechain.fetch" }
    }

    @Test func tracesWithRedactedValuesByDefault() async throws {
        let span = try #require(try await fetchSpan(try pipeline("")))
        #expect(span.attributes["storechain.predicate"]?.toSpanAttribute() == "name == ?")
        #expect(span.attributes["storechain.entity"]?.toSpanAttribute() == "Band")
    }

    @Test func showsValuesOrTurnsTracingOff() async throws {
        let shown = try #require(try await fetchSpan(try pipeline("tracing: { redact-values: false }")))
        #expect(shown.attributes["storechain.predicate"]?.toSpanAttribute() == #"name == "Low""#)
        #expect(try await fetchSpan(try pipeline("tracing: { enabled: false }")) == nil)
    }

    @Test func anExtendingFileTakesItsBasesTracingUnlessItSaysOtherwise() async throws {
        let folder = try PipelineFileTests.workingCopy()
        try """
        model: music.model.yml
        tracing: { enabled: false }
        terminal:
          in-memory: { records: music.json }
        """.write(to: folder.appending(path: "base.yml"), atomically: true, encoding: .utf8)
        try "extends: base.yml\n".write(to: folder.appending(path: "quiet.yml"), atomically: true, encoding: .utf8)
        try "extends: base.yml\ntracing: { enabled: true }\n".write(
            to: folder.appending(path: "loud.yml"), atomically: true, encoding: .utf8)
        let quiet = try Pipeline.load(contentsOf: folder.appending(path: "quiet.yml"))
        #expect(quiet.tracing.enabled == false)
        #expect(try await fetchSpan(quiet) == nil)
        let loud = try Pipeline.load(contentsOf: folder.appending(path: "loud.yml"))
        #expect(try await fetchSpan(loud) != nil)
    }

    @Test func badTracingOptionsAreReportedAtTheirLine() throws {
        let failure = try #require(throws: ValidationFailure.self) {
            try pipeline("tracing: { enabled: sometimes }", source: "bad.yml")
        }
        let text = failure.errors.map(\.description).joined(separator: "\n")
        #expect(text.contains("bad.yml:2"), "\(text)")
        #expect(text.contains("tracing.enabled: expected true or false, found 'sometimes'"), "\(text)")
        let unknown = try #require(throws: ValidationFailure.self) {
            try pipeline("tracing: { redact: no }", source: "bad.yml")
        }
        #expect(unknown.errors.map(\.description).joined().contains("redact"), "\(unknown.errors)")
    }
}
