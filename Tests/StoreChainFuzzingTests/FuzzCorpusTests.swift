import Foundation
@_spi(Internals) import StoreChain
import Testing

@testable import StoreChainFileFuzzing
@testable import StoreChainFuzzing

/// Replays the committed seed corpus and every input a fuzzer ever crashed on (`Fuzz/`) through
/// the same checks the fuzzers run, so `swift test` catches a regression without a fuzzer build.
@Suite struct FuzzCorpusTests {
    static let fuzzFolder = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Fuzz")
    static let targets = FuzzTarget.coreTargets + FuzzTarget.fileTargets

    static func inputs(of target: String, in folder: String) -> [URL] {
        let directory = fuzzFolder.appendingPathComponent(folder).appendingPathComponent(target)
        let files = (try? FileManager.default.contentsOfDirectory(at: directory, includingPropertiesForKeys: nil)) ?? []
        return files.filter { !$0.lastPathComponent.hasPrefix(".") }.sorted { $0.path < $1.path }
    }

    @Test(arguments: targets.map(\.name))
    func everySeedAndEveryPastCrashKeepsItsPromise(_ name: String) async throws {
        let target = try #require(Self.targets.first { $0.name == name })
        let seeds = Self.inputs(of: name, in: "Corpus")
        #expect(!seeds.isEmpty, "Fuzz/Corpus/\(name) has no seeds")
        for file in seeds + Self.inputs(of: name, in: "Regressions") {
            let finding = await target.check(Array(try Data(contentsOf: file)))
            #expect(finding == nil, "\(file.lastPathComponent): \(finding ?? "")")
        }
    }

    @Test func aTargetIsChosenByName() {
        let chosen = FuzzTarget.selected(
            among: FuzzTarget.coreTargets, environment: ["STORECHAIN_FUZZ_TARGET": "records"])
        #expect((try? chosen.get())?.name == "records")
        let unknown = FuzzTarget.selected(
            among: FuzzTarget.coreTargets, environment: ["STORECHAIN_FUZZ_TARGET": "pipe"])
        guard case .failure(let error) = unknown else {
            Issue.record("an unknown target was chosen")
            return
        }
        #expect(error.message == "no fuzz target 'pipe' here; choose one of: predicate, records")
    }

    // The checks themselves: each reports the broken promise it exists to find.

    @Test func aSyntaxErrorPointingOutsideTheTextIsAFinding() {
        let outside = StoreChainError(.predicateSyntax, "unexpected end", at: .init(offset: 9))
        #expect(PredicateFuzzing.misplaced(outside, in: "a ==") != nil)
        let inside = StoreChainError(.predicateSyntax, "unexpected end", at: .init(offset: 4))
        #expect(PredicateFuzzing.misplaced(inside, in: "a ==") == nil)
        let wrongCode = StoreChainError(.typeMismatch, "no", at: .init(offset: 0))
        #expect(PredicateFuzzing.misplaced(wrongCode, in: "a ==") != nil)
    }

    @Test func aRelationshipWhoseInverseDoesNotPointBackIsAFinding() throws {
        let model = try #require(RecordsFuzzing.model)
        let band = ObjectID(entity: "Band", key: .integer(1))
        let album = ObjectID(entity: "Album", key: .integer(10))
        let records = try JSONParser().parse(#"{"Band": [{"id": 1}], "Album": [{"id": 10}]}"#)
        let oneSided = Dataset([
            Node(id: band, attributes: ["name": .string("A")], relationships: ["albums": .toMany([album])]),
            Node(id: album, attributes: ["title": .string("T")], relationships: ["band": .toOne(nil)]),
        ])
        let finding = RecordsFuzzing.inconsistency(in: oneSided, loadedFrom: records, model: model)
        #expect(finding == "Band/1.albums holds Album/10, but Album/10.band does not hold Band/1")
        let bandOnly = Dataset([Node(id: band, attributes: ["name": .string("A")])])
        let missing = RecordsFuzzing.inconsistency(in: bandOnly, loadedFrom: records, model: model)
        #expect(missing == "1 Album records loaded as 0 nodes")
    }

    @Test func aProblemWithoutAPlaceIsAFinding() {
        let unplaced = ValidationFailure([StoreChainError(.invalidPipeline, "bad")])
        #expect(FileFuzzing.unplaced(unplaced, what: "pipeline file") != nil)
        #expect(FileFuzzing.unplaced(ValidationFailure([]), what: "pipeline file") != nil)
        let placed = ValidationFailure([StoreChainError(.invalidPipeline, "bad", at: .init(file: "p.yml", line: 3))])
        #expect(FileFuzzing.unplaced(placed, what: "pipeline file") == nil)
    }
}
