import Foundation
import StoreChain
import StoreChainFuzzing
import StoreChainHTTP

extension FuzzTarget {
    /// The remote adapter's JSON → node mapping: the input is the body of every response. A
    /// fetch (embedded albums), a fetch through a foreign key and an object fault each give
    /// nodes of the right entity with a key, or fail with a typed error that names the URL.
    public static let remoteRecords = FuzzTarget(name: "remote-records") { bytes in
        let body = Data(bytes)
        let transport = StubTransport { _ in
            TransportResponse(status: 200, headers: ["Content-Type": "application/json"], body: body)
        }
        let responder: RemoteResponder
        do {
            responder = try RemoteResponder(
                model: RemoteRecordsFuzzing.model, options: RemoteRecordsFuzzing.options, transport: transport,
                environment: [:])
        } catch {
            return "the fuzz backend description is refused: \(error)"
        }
        // As an app sends them: through a chain, whose pager asks the terminal for pages.
        let chain = Chain(handlers: [], terminal: responder, tracing: nil)
        for request in RemoteRecordsFuzzing.requests {
            do {
                let response = try await chain.send(request)
                if let problem = RemoteRecordsFuzzing.wrongNodes(in: response, for: request) { return problem }
            } catch let error as StoreChainError {
                if error.location?.path == nil && error.location?.file == nil {
                    return "\(request.kind) failed without saying where: \(error)"
                }
            } catch {
                return "\(request.kind) failed with an untyped \(type(of: error)): \(error)"
            }
        }
        return nil
    }
}

enum RemoteRecordsFuzzing {
    static let model: ObjectModel = {
        do {
            return try ObjectModel([
                EntityDescription(
                    "Band", key: "id",
                    attributes: [
                        AttributeDescription("id", .integer), AttributeDescription("name", .string),
                        AttributeDescription("founded", .date, optional: true),
                        AttributeDescription("rating", .double, optional: true),
                    ],
                    relationships: [
                        RelationshipDescription("albums", .toMany(ordered: false), "Album", inverse: "band")
                    ]),
                EntityDescription(
                    "Album", key: "id",
                    attributes: [
                        AttributeDescription("id", .integer), AttributeDescription("title", .string),
                        AttributeDescription("year", .integer, optional: true),
                    ],
                    relationships: [RelationshipDescription("band", .toOne, "Band", inverse: "albums", optional: true)]),
            ])
        } catch {
            preconditionFailure("the fuzz model is valid by construction: \(error)")
        }
    }()

    static let baseURL = URL(string: "https://fuzz.example/v2") ?? URL(fileURLWithPath: "/")

    static let options: RemoteOptions = {
        var band = RemoteEntityOptions(
            records: "data.items",
            attributes: ["name": "attributes.name", "founded": "attributes.founded_at", "rating": "stats.rating"],
            relationships: ["albums": .embedded("albums")])
        band.fetch = [RemoteEndpoint("GET /bands")]
        band.get = "GET /bands/{id}"
        var album = RemoteEntityOptions(
            records: "data", key: "album_id", relationships: ["band": .foreignKey("band_id")])
        album.fetch = [RemoteEndpoint("GET /bands/{band}/albums", bind: ["band": ParameterBinding("band.id")])]
        return RemoteOptions(baseURL: baseURL, entities: ["Band": band, "Album": album])
    }()

    /// A plain fetch, a fetch through the foreign key, and an object fault.
    static let requests: [StoreRequest] = {
        var requests: [StoreRequest] = [.fetch(StoreChain.FetchRequest(entity: "Band"))]
        if let byBand = try? FetchPredicate("band.id == 1") {
            requests.append(.fetch(StoreChain.FetchRequest(entity: "Album", predicate: byBand)))
        }
        requests.append(.objectFault(ObjectID(entity: "Band", key: .integer(1))))
        return requests
    }()

    /// Nodes of another entity than asked, or without a key, are a wrong answer.
    static func wrongNodes(in response: StoreResponse, for request: StoreRequest) -> String? {
        var nodes = response.related
        if case .fetch(let fetch) = request, case .objects(let objects)? = try? response.fetchResult() {
            if let stray = objects.first(where: { $0.id.entity != fetch.entity }) {
                return "a fetch of \(fetch.entity) answered \(stray.id)"
            }
            nodes += objects
        }
        if case .objectFault(let id) = request, let node = try? response.objectNode() {
            if node.id != id { return "the fault for \(id) answered \(node.id)" }
            nodes.append(node)
        }
        for node in nodes where model.entity(named: node.id.entity) == nil {
            return "an answer holds \(node.id), an object of no entity in the model"
        }
        return nil
    }
}
