import Foundation
import StoreChain

extension RemoteResponder {
    /// The changes since `request.cursor` through the backend's change feed (`changes` in the
    /// options): each change mapped to an object ID, its operation and (when the feed sends
    /// it) its new state, mapped like a fetched record. A gap status is a gap page. A change
    /// whose entity is not known is logged with its JSON path and skipped; one of a known entity
    /// whose key or operation cannot be read is logged and invalidates its entity, so nothing
    /// stays cached that it may have changed.
    func changes(_ request: ChangesRequest, context: RequestContext) async throws -> StoreResponse {
        guard let feed = options.changes else {
            throw StoreChainError(
                .noEndpoint, "the backend has no change feed",
                suggestion: "add a 'changes' section to the remote options, or remove the change-feed handler")
        }
        let template = try RequestTemplate(feed.request)
        var values: [String: String] = [:]
        if let cursor = request.cursor { values["cursor"] = cursor }
        if let wait = request.wait { values["wait"] = String(Int(wait.timeInterval.rounded(.up))) }
        let url = try template.url(base: options.baseURL, values: values)
        let response = try await send(
            template.method, url, longPoll: request.wait, context: context, accepting: feed.gapStatuses)
        let info = ResponseInfo(answeredBy: name, origin: .remote)
        let source = RemoteError.redacted(url)
        let isGap = feed.gapStatuses.contains(response.status)
        // A gap answer's body is read only for the cursor it may give.
        let body = isGap ? ((try? json(response, from: url)) ?? .null) : try json(response, from: url)
        let cursor = Self.cursorText(JSONPath.value(at: feed.cursor, in: body))
        if isGap {
            return StoreResponse(.changes(ChangeFeedPage(changes: [], cursor: cursor, isGap: true)), info: info)
        }
        guard case .array(let entries)? = JSONPath.value(at: feed.changes, in: body) else {
            throw StoreChainError(
                .badRecord, "expected a list of changes at '\(feed.changes)'", at: .init(path: source),
                suggestion: "check the change feed's 'changes' path against the response")
        }
        guard let cursor else {
            throw StoreChainError(
                .badRecord, "the change feed's answer has no cursor at '\(feed.cursor)'", at: .init(path: source),
                suggestion: "check the change feed's 'cursor' path against the response")
        }
        var page = ChangeFeedPage(changes: [], cursor: cursor)
        for (index, entry) in entries.enumerated() {
            let path = "$.\(feed.changes)[\(index)]"
            do throws(StoreChainError) {
                page.changes.append(try change(from: entry, feed: feed, source: source, jsonPath: path))
            } catch {
                context.logger.warning("change-feed: skipped \(source) \(path): \(error.message)")
                if let entity = entityName(of: entry, feed: feed) { page.invalidatedEntities.insert(entity) }
            }
        }
        return StoreResponse(.changes(page), info: info)
    }

    private func change(from entry: JSONValue, feed: RemoteChangesOptions, source: String, jsonPath: String)
        throws(StoreChainError) -> FeedChange
    {
        guard case .object = entry else {
            throw StoreChainError(.badRecord, "a change is \(entry.typeName), not an object")
        }
        guard let name = JSONPath.value(at: feed.entity, in: entry).flatMap(Self.cursorText) else {
            throw StoreChainError(.badRecord, "the change has no entity at '\(feed.entity)'")
        }
        guard let entityName = entityName(named: name, feed: feed), let entity = model.entity(named: entityName) else {
            throw StoreChainError(
                .unknownEntity, "the change names entity '\(name)', which the model does not have",
                suggestion: "map it in the change feed's 'entity-names'")
        }
        guard let operationText = JSONPath.value(at: feed.operation, in: entry).flatMap(Self.cursorText),
            let operation = RemoteChangesOptions.operation(operationText)
        else {
            throw StoreChainError(
                .badRecord, "the change has no operation (insert, update or delete) at '\(feed.operation)'")
        }
        let keyJSON = JSONPath.value(at: feed.key, in: entry) ?? .null
        guard let keyType = entity.keyAttribute?.type, let key = try? Value.coerce(keyJSON, to: keyType), !key.isNull
        else {
            throw StoreChainError(
                .badRecord, "the change's key at '\(feed.key)' is \(keyJSON.typeName), not a key of \(entity.name)")
        }
        let id = ObjectID(entity: entity.name, key: key)
        var node: Node?
        if operation != .delete, let field = feed.record, let record = JSONPath.value(at: field, in: entry),
            record != .null
        {
            // A record that does not map leaves the change without a state: caches forget the
            // object and it is read again.
            if let mapped = try? mapper.node(
                from: record, entity: entity, jsonPath: "\(jsonPath).\(field)", source: source),
                mapped.node.id == id
            {
                node = mapped.node
            }
        }
        return FeedChange(operation, id, node: node)
    }

    /// The model entity a change names, if any.
    private func entityName(of entry: JSONValue, feed: RemoteChangesOptions) -> String? {
        JSONPath.value(at: feed.entity, in: entry).flatMap(Self.cursorText).flatMap {
            entityName(named: $0, feed: feed)
        }
    }

    /// The model entity the backend calls `name`, if any.
    private func entityName(named name: String, feed: RemoteChangesOptions) -> String? {
        if let mapped = feed.entityNames[name] { return mapped }
        return model.entities.first { $0.name.caseInsensitiveCompare(name) == .orderedSame }?.name
    }

    /// A cursor (or name) as text: a string, or a number written out.
    private static func cursorText(_ json: JSONValue?) -> String? {
        switch json {
        case .string(let text)?: text
        case .integer(let number)?: String(number)
        case .double(let number)?: String(number)
        default: nil
        }
    }
}
