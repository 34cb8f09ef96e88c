import Foundation
@_spi(Internals) import StoreChain

extension RemoteResponder {
    /// The changes since `request.cursor` through the backend's change feed (`changes` in the
    /// options), a changes-since endpoint or an event stream: each change mapped to an object
    /// ID, its operation and (when the feed sends it) its new state, mapped like a fetched
    /// record. A gap status is a gap page. A change whose entity is not known is logged with its
    /// JSON path and skipped; one of a known entity whose key or operation cannot be read is
    /// logged and invalidates its entity, so nothing stays cached that it may have changed.
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
        let info = ResponseInfo(answeredBy: name, origin: .remote)
        switch feed.format {
        case .json:
            let response = try await exchange.send(
                template.method, url, longPoll: request.wait, context: context, accepting: feed.gapStatuses)
            return StoreResponse(.changes(try jsonPage(response, from: url, feed: feed, context: context)), info: info)
        case .eventStream:
            // Held open when a stream may answer; else (or where the transport cannot hold it)
            // read until it has been quiet, which without a wait learns where it stands.
            let read = EventStreamRead(wait: request.wait ?? feed.quiet, quiet: feed.quiet, held: request.stream)
            let response = try await exchange.send(
                template.method, url, longPoll: read.wait, eventStream: read, lastEventID: request.cursor,
                context: context, accepting: feed.gapStatuses)
            if let gap = gapPage(response, from: url, feed: feed) { return StoreResponse(.changes(gap), info: info) }
            if let body = response.bodyStream {
                let stream = following(body, from: url, asked: request.cursor, feed: feed, context: context)
                return StoreResponse(.changeStream(stream), info: info)
            }
            var parser = ServerSentEventParser()
            let events = parser.consume(response.body)
            let page = eventStreamPage(
                events, parsed: parser, asked: request.cursor, source: RemoteError.redacted(url), feed: feed,
                context: context)
            return StoreResponse(.changes(page), info: info)
        }
    }

    /// A changes-since answer: the list of changes and the cursor, from a JSON body.
    private func jsonPage(
        _ response: TransportResponse, from url: URL, feed: RemoteChangesOptions, context: RequestContext
    )
        throws(StoreChainError) -> ChangeFeedPage
    {
        let source = RemoteError.redacted(url)
        if let gap = gapPage(response, from: url, feed: feed) { return gap }
        let body = try exchange.json(response, from: url)
        guard case .array(let entries)? = JSONPath.value(at: feed.changes, in: body) else {
            throw StoreChainError(
                .badRecord, "expected a list of changes at '\(feed.changes)'", at: .init(path: source),
                suggestion: "check the change feed's 'changes' path against the response")
        }
        guard let cursor = Self.cursorText(JSONPath.value(at: feed.cursor, in: body)) else {
            throw StoreChainError(
                .badRecord, "the change feed's answer has no cursor at '\(feed.cursor)'", at: .init(path: source),
                suggestion: "check the change feed's 'cursor' path against the response")
        }
        var page = ChangeFeedPage(changes: [], cursor: cursor)
        for (index, entry) in entries.enumerated() {
            add(entry, at: "$.\(feed.changes)[\(index)]", to: &page, feed: feed, source: source, context: context)
        }
        return page
    }

    /// An event stream's answer, or what one chunk of a stream held open said: each event's data
    /// is one change; the stream's last event ID is the cursor. A gap event starts the page
    /// afresh as a gap. Data that is not JSON is logged with its line and forgets every entity
    /// the feed names, since what it changed is unknown; so does a stream that sends events with
    /// no ids (a reconnection cannot resume after them).
    func eventStreamPage(
        _ events: [ServerSentEventParser.Event], parsed parser: ServerSentEventParser, asked cursor: String?,
        source: String, feed: RemoteChangesOptions, context: RequestContext
    ) -> ChangeFeedPage {
        let reached = parser.lastEventID.flatMap { $0.isEmpty ? nil : $0 }
        var page = ChangeFeedPage(changes: [], cursor: reached ?? cursor, reconnectionTime: parser.reconnectionTime)
        for event in events {
            let position = "line \(event.line)"
            if feed.gapEvents.contains(event.type) {
                context.logger.warning("change-feed: \(source) \(position): a '\(event.type)' event (a gap)")
                page.changes.removeAll()
                page.invalidatedEntities.removeAll()
                page.isGap = true
                continue
            }
            if feed.ignoredEvents.contains(event.type) { continue }
            do throws(StoreChainError) {
                let entry = try JSONParser().parse(Array(event.data.utf8), source: "\(source) \(position)")
                add(
                    entry, at: "\(position) $", to: &page, feed: feed, source: source, context: context,
                    operation: event.type == "message" ? nil : event.type)
            } catch {
                context.logger.warning(
                    "change-feed: skipped \(source) \(position) (a '\(event.type)' event): \(error.message); what it changed is unknown, so every entity the feed names is forgotten"
                )
                page.invalidatedEntities.formUnion(feedEntities(feed))
            }
        }
        if !events.isEmpty, reached == nil, !page.isGap {
            context.logger.warning(
                "change-feed: \(source) sends events without ids, so a reconnection cannot resume after them; caches forget what they hold"
            )
            page.isGap = true
        }
        return page
    }

    /// A gap page when the status says the backend cannot answer from the cursor asked, with
    /// the cursor its body may give.
    private func gapPage(_ response: TransportResponse, from url: URL, feed: RemoteChangesOptions) -> ChangeFeedPage? {
        guard feed.gapStatuses.contains(response.status) else { return nil }
        // A gap answer's body is read only for the cursor it may give.
        let body = (try? exchange.json(response, from: url)) ?? .null
        return ChangeFeedPage(
            changes: [], cursor: Self.cursorText(JSONPath.value(at: feed.cursor, in: body)), isGap: true)
    }

    /// Adds the change `entry` describes to `page`; one that cannot be read is logged with its
    /// position and invalidates its entity, when known. `operation` is the one to assume when the
    /// entry has no operation field (an event's type).
    private func add(
        _ entry: JSONValue, at path: String, to page: inout ChangeFeedPage, feed: RemoteChangesOptions,
        source: String, context: RequestContext, operation: String? = nil
    ) {
        do throws(StoreChainError) {
            page.changes.append(
                try change(from: entry, feed: feed, source: source, jsonPath: path, assumedOperation: operation))
        } catch {
            context.logger.warning("change-feed: skipped \(source) \(path): \(error.message)")
            if let entity = entityName(of: entry, feed: feed) { page.invalidatedEntities.insert(entity) }
        }
    }

    /// The model entities a feed may name: those the remote maps and those `entity-names` names.
    private func feedEntities(_ feed: RemoteChangesOptions) -> Set<String> {
        Set(options.entities.keys).union(feed.entityNames.values)
    }

    private func change(
        from entry: JSONValue, feed: RemoteChangesOptions, source: String, jsonPath: String,
        assumedOperation: String?
    ) throws(StoreChainError) -> FeedChange {
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
        guard
            let operationText = JSONPath.value(at: feed.operation, in: entry).flatMap(Self.cursorText)
                ?? assumedOperation,
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
