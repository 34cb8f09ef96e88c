import Foundation
import StoreChain

extension RemoteResponder {
    /// The object by key: through the get endpoint (404: gone; conditional with `validators`),
    /// else a fetch by key.
    func objectFault(_ id: ObjectID, ifChangedSince validators: Validators? = nil, context: RequestContext)
        async throws -> StoreResponse
    {
        let entity = try model.requireEntity(id.entity)
        guard let key = id.key else {
            throw StoreChainError(.invalidRequest, "\(id) is not saved yet, so the backend does not know it")
        }
        let options = mapper.options(for: entity.name)
        var info = ResponseInfo(answeredBy: name, origin: .remote)
        if let get = options.get {
            let template = try RequestTemplate(get)
            guard let variable = template.pathVariables.first else {
                throw StoreChainError(.invalidRequest, "get template '\(get)' has no {key} variable")
            }
            let url = try template.url(base: self.options.baseURL, values: [variable: QueryPlanner.parameterText(key)])
            let response = try await exchange.send(
                template.method, url, ifChangedSince: validators, context: context, accepting: [404, 410])
            info = HTTPMetadata.info(from: response, answeredBy: name)
            if response.status == 304 {
                info.notModified = true
                return StoreResponse(.object(nil), info: info)
            }
            guard response.status != 404, response.status != 410 else { return StoreResponse(.object(nil), info: info) }
            let body = try exchange.json(response, from: url)
            let (node, embedded) = try mapper.node(
                from: body, entity: entity, jsonPath: "$", source: RemoteError.redacted(url))
            guard node.id == id else {
                // Answering it as `id` would put another object's data under this one's name.
                throw StoreChainError(
                    .badRecord, "asked for \(id), the backend answered with \(node.id)",
                    at: .init(path: "\(RemoteError.redacted(url)) $.\(options.key ?? entity.key)"),
                    suggestion: "check the entity's 'get' endpoint and its 'key' field")
            }
            return StoreResponse(.object(node), related: embedded, info: info)
        }
        // The chain's pager reads it as a fetch by key.
        throw StoreChainError(
            .noEndpoint, "\(entity.name) has no get endpoint to read one object by its key",
            suggestion: "declare \(entity.name)'s get endpoint, or send object faults through a Chain (its pager reads"
                + " the object as a fetch by key)")
    }

    /// A relationship fault is no one exchange of its own: one with its own endpoint is read a
    /// page at a time (`relationshipPage`); any other fails `no-endpoint`, and the chain's pager
    /// reads it from the owner's record (read again by key) or through its to-one inverse.
    func relationshipFault(_ id: ObjectID, _ relationshipName: String, context: RequestContext) throws
        -> StoreResponse
    {
        let entity = try model.requireEntity(id.entity)
        _ = try entity.requireRelationship(relationshipName)
        switch mapper.options(for: entity.name).relationships[relationshipName] {
        case .endpoint?:
            throw StoreChainError(
                .invalidRequest,
                "\(id).\(relationshipName) has an endpoint of its own, read one page at a time by a pager above",
                suggestion: "send relationship faults through a Chain (it places a pager in front of this terminal)")
        case let mapping?:
            throw StoreChainError(
                .noEndpoint,
                "'\(entity.name).\(relationshipName)' is read from \(id)'s own record (mapped \(mapping.mappedAs)), not by"
                    + " a request of its own",
                suggestion: "send relationship faults through a Chain (its pager reads the owner's record)")
        case nil:
            throw StoreChainError(
                .noEndpoint,
                "'\(entity.name).\(relationshipName)' is neither in \(entity.name)'s records nor read from an endpoint of its own",
                suggestion:
                    "map it as a foreign key, a link, an embedded record or its own endpoint, or give it a to-one inverse"
                    + " whose records carry \(entity.name)'s key")
        }
    }

    /// Reads one page of a relationship's own list (`StoreRequest.relationshipPage`): the
    /// page's objects in the backend's order, and where the next page is, as the relationship's
    /// paging style says (by default the next link its paging facts name, `Link: rel="next"`
    /// unless declared, as an absolute URL on the backend's host).
    func relationshipPage(_ page: PageRequest, of owner: ObjectID, _ name: String, context: RequestContext)
        async throws -> StoreResponse
    {
        let entity = try model.requireEntity(owner.entity)
        guard let relationship = entity.relationship(named: name),
            case .endpoint(let text, let facts, let paging)? = mapper.options(for: entity.name).relationships[name]
        else {
            // No endpoint of its own: no pages (the pager reads it another way).
            return try relationshipFault(owner, name, context: context)
        }
        let destination = try model.requireEntity(relationship.destination)
        let template = try RequestTemplate(text)
        guard let key = owner.key, let variable = template.pathVariables.first else {
            throw StoreChainError(.invalidRequest, "\(owner) has no key to read its '\(name)' from '\(text)'")
        }
        let address = try listings.pageAddress(
            page.position, size: page.size, paging: paging, template: template, endpoint: text,
            values: [variable: QueryPlanner.parameterText(key)])
        let response = try await exchange.send(
            template.method, address.url, context: context,
            accepting: address.mayBePastTheEnd ? ListingReader.pastTheEnd : [])
        // A page past the last (asked for after a full page): the list ended before it.
        let pastTheEnd = ListingReader.pastTheEnd.contains(response.status)
        let recordsPath = mapper.options(for: destination.name).records
        let location = RemoteError.redacted(address.url)
        let body = pastTheEnd ? nil : try exchange.json(response, from: address.url)
        let records =
            try body.map { body throws(StoreChainError) in
                try mapper.records(in: body, at: recordsPath, source: location)
            } ?? []
        var loaded = ListingReader.Listing()
        var seen: Set<ObjectID> = []
        try listings.map(
            records, entity: destination, recordsPath: recordsPath, source: location, including: body,
            into: &loaded, seen: &seen)
        let signals =
            pastTheEnd
            ? PagingFacts.Signals(nextIsStated: true)
            : try facts.signals(in: response, body: body, source: location)
        let (next, size) = try listings.following(
            signals, body: body, from: address.url, paging: paging, start: address.start, size: address.size,
            records: records, recordsPath: recordsPath, endpoint: text)
        if next == nil, paging == .link, facts == PagingFacts(), let body {
            // Declared without paging: more announced in the body fails.
            try UndeclaredPaging.check(
                body, records: records.count, isWholeListing: page.position == .record(0), endpoint: text,
                source: location)
        }
        let ids = loaded.nodes.map(\.id)
        var info = HTTPMetadata.info(from: response, answeredBy: self.name)
        // A relationship's list is the whole answer, in its order.
        info.page = PageInfo(
            style: address.style, size: size, start: address.start, records: records.count, next: next,
            listing: .all, total: signals.total, endpoint: text)
        return StoreResponse(
            .relationship(relationship.isToMany ? .toMany(ids) : .toOne(ids.first)),
            related: loaded.embedded + loaded.nodes, info: info)
    }
}
