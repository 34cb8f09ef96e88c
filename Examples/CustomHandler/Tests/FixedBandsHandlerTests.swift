import CustomHandlerExample
import Foundation
import StoreChain
import StoreChainTesting
import Testing

@Suite struct FixedBandsHandlerTests {
    let model: ObjectModel
    let terminal: RecordingResponder
    let chain: Chain

    init() throws {
        let model = try ObjectModel([
            EntityDescription(
                "Band", key: "id",
                attributes: [AttributeDescription("id", .integer), AttributeDescription("name", .string)])
        ])
        self.model = model
        terminal = RecordingResponder { _, _ in TestData.fetched([TestData.node("Band", 7, ["name": "Remote"])]) }
        let local = [TestData.node("Band", 1, ["name": "Low"]), TestData.node("Band", 2, ["name": "Beach House"])]
        chain = Chain(terminal: terminal) { FixedBandsHandler(model: model, bands: local) }
    }

    @Test func answersKnownIDsLocally() async throws {
        let response = try await chain.send(
            .fetch(TestData.fetch("Band", where: "id IN {2, 1}", sort: [FetchSortDescriptor("name")])))
        #expect(response.info.answeredBy == "FixedBandsHandler")
        #expect(
            try response.fetchResult()
                == .objects([
                    TestData.node("Band", 2, ["name": "Beach House"]), TestData.node("Band", 1, ["name": "Low"]),
                ]))
        #expect(
            try await chain.fetch(TestData.fetch("Band", where: "id == 1"))
                == .objects([TestData.node("Band", 1, ["name": "Low"])]))
        try terminal.requireForwarded(exactly: 0)
    }

    @Test func forwardsEverythingElse() async throws {
        _ = try await chain.fetch(TestData.fetch("Band", where: "id IN {1, 7}"))
        _ = try await chain.fetch(TestData.fetch("Band", where: "name == 'Low'"))
        _ = try await chain.fetch(TestData.fetch("Album"))
        _ = try await chain.send(.objectFault(ObjectID(entity: "Band", key: 1)))
        try terminal.requireForwarded(exactly: 3, .fetch)
        try terminal.requireForwarded(exactly: 1, .objectFault)
    }

    @Test func worksInFrontOfTheJSONFileStore() async throws {
        let music = URL(filePath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appending(path: "Music")
        let (chain, model) = try CustomHandlerExample.makeChain(musicDirectory: music)
        let context = ObjectContext(chain: chain, model: model)
        let bundled = try await context.fetch(TestData.fetch("Band", where: "id == 1"))
        #expect(try await bundled.first?.value("country") == "UK")
        let fromFile = try await context.fetch(TestData.fetch("Band", where: "id IN {2, 4}"))
        #expect(try await fromFile.asyncMap { try await $0.value("name") } == ["Sigur Rós", "The Notwist"])
    }

    @Test func isRegisteredByTypeNameAndUsedFromAPipelineFile() async throws {
        let folder = URL(filePath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        let pipeline = try CustomHandlerExample.loadPipeline(folder.appending(path: "custom.pipeline.yml"))
        #expect(pipeline.stages.map(\.type) == ["fixed-bands"])
        let (swiftChain, _) = try CustomHandlerExample.makeChain(
            musicDirectory: folder.deletingLastPathComponent().appending(path: "Music"))
        let fileChain = pipeline.makeChain()
        for format in ["id == 1", "id IN {1, 2}", "name BEGINSWITH 'S'"] {
            let request = try TestData.fetch("Band", where: format)
            let fromFile = try await fileChain.send(.fetch(request))
            let fromSwift = try await swiftChain.send(.fetch(request))
            #expect(try fromFile.fetchResult() == (try fromSwift.fetchResult()), "\(format)")
            #expect(fromFile.info.answeredBy == fromSwift.info.answeredBy, "\(format)")
        }
    }
}

extension Array where Element: Sendable {
    fileprivate func asyncMap<T>(_ transform: (Element) async throws -> T) async rethrows -> [T] {
        var results: [T] = []
        for element in self { results.append(try await transform(element)) }
        return results
    }
}
