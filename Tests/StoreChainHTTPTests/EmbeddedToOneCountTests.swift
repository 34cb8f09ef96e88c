import Foundation
import StoreChain
import StoreChainHTTP
import StoreChainTesting
import Testing

/// A predicate that reads into an embedded to-one (`user.siteAdmin`, the user a GitHub-style
/// issue record carries inside it) of an entity with no endpoints of its own: everything it
/// needs comes with the listing, so it is answered from the listing alone, with and without a
/// pager and a cache. (Reported as failing with "no endpoint of 'User' can serve a fetch where
/// TRUEPREDICATE"; the report's own pipeline was not at hand, and this form answers.)
@Suite struct EmbeddedToOneCountTests {
    static func model() throws -> ObjectModel {
        try ObjectModel([
            EntityDescription(
                "Issue", key: "id",
                attributes: [AttributeDescription("id", .integer), AttributeDescription("title", .string)],
                relationships: [RelationshipDescription("user", .toOne, "User", inverse: "issues", optional: true)]),
            EntityDescription(
                "User", key: "id",
                attributes: [
                    AttributeDescription("id", .integer), AttributeDescription("siteAdmin", .boolean),
                    AttributeDescription("type", .string),
                ],
                relationships: [RelationshipDescription("issues", .toMany(ordered: false), "Issue", inverse: "user")]),
        ])
    }

    @Test(arguments: [false, true], [false, true])
    func aCountThroughAnEmbeddedToOneIsAnsweredFromTheListing(behindAPager: Bool, cached: Bool) async throws {
        let transport = StubTransport { request in
            let page =
                URLComponents(url: request.url, resolvingAgainstBaseURL: false)?.queryItems?
                .first { $0.name == "page" }?.value.flatMap { Int($0) } ?? 1
            let issues = (((page - 1) * 30 + 1)..<max((page - 1) * 30 + 1, min(71, page * 30 + 1))).map { key in
                #"{"id": \#(key), "title": "Issue \#(key)", "user": {"id": \#(key % 7), "siteAdmin": \#(key % 7 == 0), "type": "\#(key % 7 % 3 == 0 ? "Bot" : "User")"}}"#
            }
            let link =
                page * 30 < 70 ? ["Link": #"<https://api.example/issues?page=\#(page + 1)>; rel="next""#] : [:]
            return .json("[" + issues.joined(separator: ", ") + "]", headers: link)
        }
        let options = RemoteOptions(
            baseURL: URL(string: "https://api.example")!,
            entities: [
                "Issue": RemoteEntityOptions(
                    relationships: ["user": .embedded("user")],
                    fetch: [RemoteEndpoint("GET /issues?per_page=30", paging: .link)])
            ])
        let remote = try RemoteResponder(
            model: try Self.model(), options: options, transport: transport, environment: [:])
        let model = try Self.model()
        let handlers: [any StoreHandler] =
            (cached ? [MemoryCache(model: model)] : []) + (behindAPager ? [PaginationHandler(model: model)] : [])
        let chain = Chain(handlers: handlers, terminal: remote)
        let count = FetchRequest(
            entity: "Issue", predicate: try FetchPredicate(#"user.siteAdmin == NO AND user.type == "User""#),
            resultType: .count)
        let expected = (1...70).filter { $0 % 7 != 0 && $0 % 7 % 3 != 0 }.count
        #expect(try await chain.fetch(count) == .count(expected))
        #expect(transport.requests.count == 3)
    }
}
