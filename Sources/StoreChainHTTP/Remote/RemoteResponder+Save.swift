import Foundation
import StoreChain

extension RemoteResponder {
    /// Sends inserts (parents before the children that point at them, so a child carries its
    /// parent's new key), then updates, then deletes. A REST backend cannot do this atomically:
    /// when one request fails, the error says which object failed and which were already saved.
    ///
    /// A save with an idempotency key sends each of its HTTP requests with an `Idempotency-Key`
    /// header of that key and the request's place in the save (`KEY/1`, `KEY/2`…), the same
    /// each time the save is sent, so a backend that honours it answers a repeat with its first
    /// answer instead of saving twice.
    func save(_ changes: SaveChanges, context: RequestContext) async throws -> StoreResponse {
        var sent = 0
        func nextKey() -> String? {
            sent += 1
            return changes.idempotencyKey.map { "\($0)/\(sent)" }
        }
        var permanentIDs: [ObjectID: ObjectID] = [:]
        var saved: [Node] = []
        var done: [String] = []
        func failing(_ object: ObjectID, _ error: any Error) -> any Error {
            guard var error = error as? StoreChainError else { return error }
            error.message = "saving \(object): \(error.message)"
            if !done.isEmpty { error.message += " (already saved: \(done.joined(separator: ", ")))" }
            error.code = error.code == .httpStatus || error.code == .badRecord ? .saveFailed : error.code
            return error
        }
        for node in try insertionOrder(changes.inserted) {
            do {
                let created = try await create(node, permanentIDs: permanentIDs, key: nextKey(), context: context)
                permanentIDs[node.id] = created.id
                saved.append(created)
                done.append("\(node.id) as \(created.id)")
            } catch {
                throw failing(node.id, error)
            }
        }
        for node in changes.updated {
            do {
                saved.append(try await update(node, permanentIDs: permanentIDs, key: nextKey(), context: context))
                done.append("\(node.id)")
            } catch {
                throw failing(node.id, error)
            }
        }
        for id in changes.deleted {
            do {
                try await delete(id, basedOn: changes.deletedVersions[id], key: nextKey(), context: context)
                done.append("deleted \(id)")
            } catch {
                throw failing(id, error)
            }
        }
        let result = SaveResult(permanentIDs: permanentIDs, nodes: saved, deleted: changes.deleted)
        return StoreResponse(.saved(result), info: ResponseInfo(answeredBy: name, origin: .remote))
    }

    /// Inserted objects ordered so that an object comes after every new object it points at.
    func insertionOrder(_ inserted: [Node]) throws(StoreChainError) -> [Node] {
        let pending = Set(inserted.map(\.id))
        var placed: Set<ObjectID> = []
        var order: [Node] = []
        var remaining = inserted
        while !remaining.isEmpty {
            let ready = remaining.filter { node in
                node.relationships.values.allSatisfy { value in
                    guard case .toOne(let target?) = value else { return true }
                    return !pending.contains(target) || placed.contains(target) || target == node.id
                }
            }
            guard !ready.isEmpty else {
                throw StoreChainError(
                    .saveFailed,
                    "new objects point at each other in a cycle: \(remaining.map(\.id.description).joined(separator: ", "))",
                    suggestion: "save one of them first, then set the relationship that closes the cycle")
            }
            for node in ready { placed.insert(node.id) }
            order += ready
            remaining.removeAll { placed.contains($0.id) }
        }
        return order
    }

    private func template(_ text: String?, _ what: String, _ entity: EntityDescription) throws(StoreChainError)
        -> RequestTemplate
    {
        guard let text else {
            throw StoreChainError(
                .noEndpoint, "entity '\(entity.name)' has no \(what) endpoint",
                suggestion:
                    "declare '\(what)' in its remote options, as in '\(what == "create" ? "POST" : what == "update" ? "PATCH" : "DELETE") /\(entity.name.lowercased())s\(what == "create" ? "" : "/{id}")'"
            )
        }
        return try RequestTemplate(text)
    }

    private func create(_ node: Node, permanentIDs: [ObjectID: ObjectID], key: String?, context: RequestContext)
        async throws -> Node
    {
        let entity = try model.requireEntity(node.id.entity)
        let template = try template(mapper.options(for: entity.name).create, "create", entity)
        let url = try template.url(base: options.baseURL, values: [:])
        let body = mapper.body(for: node, entity: entity, permanentIDs: permanentIDs, includeKey: true)
        let response = try await exchange.send(template.method, url, body: body, idempotencyKey: key, context: context)
        return try savedNode(response, from: url, entity: entity, fallback: node)
    }

    private func update(_ node: Node, permanentIDs: [ObjectID: ObjectID], key: String?, context: RequestContext)
        async throws -> Node
    {
        let entity = try model.requireEntity(node.id.entity)
        let template = try template(mapper.options(for: entity.name).update, "update", entity)
        let url = try template.url(base: options.baseURL, values: keyValues(node.id, template))
        let body = mapper.body(for: node, entity: entity, permanentIDs: permanentIDs, includeKey: false)
        // Based on a known version: the backend refuses (412) when someone else changed it since.
        let ifMatch = node.version.map { "\"\($0)\"" }
        let response = try await exchange.send(
            template.method, url, body: body, idempotencyKey: key, ifMatch: ifMatch, context: context)
        return try savedNode(response, from: url, entity: entity, fallback: node)
    }

    private func delete(_ id: ObjectID, basedOn version: String?, key: String?, context: RequestContext) async throws {
        let entity = try model.requireEntity(id.entity)
        let template = try template(mapper.options(for: entity.name).delete, "delete", entity)
        let url = try template.url(base: options.baseURL, values: keyValues(id, template))
        // Already gone is as good as deleted; changed since `version` is a conflict (412).
        _ = try await exchange.send(
            template.method, url, idempotencyKey: key, ifMatch: version.map { "\"\($0)\"" }, context: context,
            accepting: [404, 410])
    }

    private func keyValues(_ id: ObjectID, _ template: RequestTemplate) throws(StoreChainError) -> [String: String] {
        guard let key = id.key, let variable = template.pathVariables.first else {
            throw StoreChainError(.invalidRequest, "'\(template)' needs the key of \(id) in its path")
        }
        return [variable: QueryPlanner.parameterText(key)]
    }

    /// The object as the backend returned it, or as sent when the response has no body.
    private func savedNode(_ response: TransportResponse, from url: URL, entity: EntityDescription, fallback: Node)
        throws(StoreChainError) -> Node
    {
        let body = try exchange.json(response, from: url)
        if case .null = body { return fallback }
        var record = body
        if let path = mapper.options(for: entity.name).records, let nested = JSONPath.value(at: path, in: body),
            case .object = nested
        {
            record = nested
        }
        return try mapper.node(from: record, entity: entity, jsonPath: "$", source: RemoteError.redacted(url)).node
    }
}
