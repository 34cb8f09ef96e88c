import Foundation
@_spi(Internals) import StoreChain

extension RemoteResponder: FetchExplaining {
    /// Which endpoint a fetch would use, what is pushed down, what runs in memory, and how the
    /// related objects it needs would be read. Sends nothing upstream: a listing's size comes
    /// from what this responder learned or, through `context`'s chain, from the caches
    /// (`.cacheOnly`).
    package func explain(_ request: FetchRequest, context: RequestContext = RequestContext()) async throws
        -> FetchExplanation
    {
        var request = request
        var plan = try FetchPlan(request, model: model)
        let planner = try planners.planner(for: request.entity)
        let narrowing = try narrowing(of: request, predicate: plan.predicate?.predicate)
        if let narrowing {
            request.predicate = narrowing.standIn()
            plan = try FetchPlan(request, model: model)
        }
        let queryPlan = try planner.plan(predicate: plan.predicate?.predicate, sort: request.sortDescriptors)
        var inMemory: [String] = []
        if let predicate = request.predicate, !queryPlan.filterApplied {
            inMemory.append("filter: \(predicate.format)")
        }
        if !request.sortDescriptors.isEmpty, !queryPlan.orderApplied {
            let why =
                queryPlan.endpoint.sort?.whyNotPushed(
                    request.sortDescriptors, key: plan.entity.key, nilable: planner.nilable(request.sortDescriptors))
                ?? "\(queryPlan.endpoint.request) takes no sort"
            inMemory.append("sort: " + request.sortDescriptors.map(\.description).joined(separator: ", ") + " (\(why))")
        }
        if request.fetchOffset > 0 || request.fetchLimit != nil {
            inMemory.append(
                "window: offset \(request.fetchOffset)" + (request.fetchLimit.map { ", limit \($0)" } ?? ""))
        }
        let (style, size): (PageInfo.Style?, Int?) =
            switch queryPlan.endpoint.paging {
            case .pages(_, _, let size, _)?: (.pageNumber, size)
            case .offset(_, _, let size)?: (.offset, size)
            case .cursor(_, _, _, let size)?: (.cursor, size)
            case .link?: (.link, nil)
            case nil: (nil, nil)
            }
        let paths = related.neededPaths(plan).map { related.namesRead(along: $0, from: plan.entity.name) }.filter {
            !$0.isEmpty
        }
        return FetchExplanation(
            endpoint: queryPlan.endpoint.request,
            pushed: queryPlan.pushed.map { pushed in
                if case .comparison(let comparison) = pushed, let narrowed = narrowing?.describe(comparison) {
                    narrowed
                } else {
                    pushed.format
                }
            },
            inMemory: inMemory,
            exact: queryPlan.filterApplied && queryPlan.orderApplied, paging: style, pageSize: size,
            follows: paths.map { $0.joined(separator: ".") },
            relatedReads: try await relatedReads(
                along: paths, from: plan.entity, context: context, serving: .fetch(request)),
            rejected: planner.rejections(predicate: plan.predicate?.predicate, sort: request.sortDescriptors),
            narrowed: narrowing?.descriptions ?? [])
    }

    /// The choices `relationshipValues` and `fetchWhere` make at run time for the relationships
    /// on `paths`, each with its expected cost.
    private func relatedReads(
        along paths: [[String]], from root: EntityDescription, context: RequestContext, serving parent: StoreRequest
    ) async throws -> [RelatedRead] {
        var reads: [RelatedRead] = []
        var seen: Set<String> = []
        for path in paths {
            var entity = root
            for name in path {
                guard let relationship = entity.relationship(named: name),
                    let destination = model.entity(named: relationship.destination)
                else { break }
                defer { entity = destination }
                guard seen.insert("\(entity.name).\(name)").inserted else { continue }
                switch mapper.options(for: entity.name).relationships[name] {
                case .endpoint(let text, _, _)?:
                    reads.append(
                        try await endpointRead(
                            relationship, of: entity, destination: destination, endpoint: text, context: context,
                            serving: parent))
                case .foreignKey?, .link?:
                    reads.append(
                        try await keyedRead(
                            relationship, of: entity, destination: destination, keyPath: [destination.key],
                            context: context, serving: parent))
                case nil:
                    if let inverse = relationship.inverse {
                        reads.append(
                            try await keyedRead(
                                relationship, of: entity, destination: destination, keyPath: [inverse, entity.key],
                                context: context, serving: parent))
                    }
                case .embedded?:
                    break
                }
            }
        }
        return reads
    }

    /// A relationship with its own endpoint: one request or more per owner, or the destination's
    /// whole listing grouped by owner.
    private func endpointRead(
        _ relationship: RelationshipDescription, of entity: EntityDescription, destination: EntityDescription,
        endpoint: String,
        context: RequestContext, serving parent: StoreRequest
    ) async throws -> RelatedRead {
        var options = [
            "cached: 0 requests when the caches hold every \(destination.name) fresh",
            "per \(entity.name): \(endpoint), 1 request or more for each",
        ]
        var choice = "the cache when it can answer, else one request per \(entity.name)"
        if let keyPath = related.destinationListing(of: relationship, destination: destination) {
            options.append(
                try await listingOption(
                    of: destination, by: keyPath.joined(separator: "."), context: context, serving: parent))
            choice =
                "the cache when it can answer, else the listing when it has fewer pages than there are"
                + " \(entity.name) objects (across every page of them the fetch reads), else one request per"
                + " \(entity.name)"
        }
        return RelatedRead(relationship: "\(entity.name).\(relationship.name)", options: options, choice: choice)
    }

    /// Objects read by key, or by the key of the owner they point back to: the endpoint that
    /// takes the keys (a batch, or one key at a time), or the destination's whole listing.
    private func keyedRead(
        _ relationship: RelationshipDescription, of entity: EntityDescription, destination: EntityDescription,
        keyPath: [String],
        context: RequestContext, serving parent: StoreRequest
    ) async throws -> RelatedRead {
        let planner = try planners.planner(for: destination.name)
        let key = Operand.constant(.integer(0))
        let by = keyPath.joined(separator: ".")
        func pushedEndpoint(_ operation: Comparison.Operator, _ value: Operand) -> String? {
            guard
                let plan = try? planner.plan(
                    predicate: .comparison(Comparison(.keyPath(keyPath), operation, value)), sort: []),
                !plan.pushed.isEmpty
            else { return nil }
            return plan.endpoint.request
        }
        var options = ["cached: 0 requests when the caches hold the \(destination.name) objects fresh"]
        let choice: String
        if let batch = pushedEndpoint(.in, .array([key])) {
            options.append("batch: \(batch), 1 request each time (once per page of \(entity.name))")
            choice =
                "the cache when it can answer, else the listing when it has fewer pages than the batches the"
                + " fetch sends, else the batch endpoint"
        } else if let single = pushedEndpoint(.equal, key) {
            options.append("per \(by): \(single), 1 request for each")
            choice =
                "the cache when it can answer, else the listing when it has fewer pages than there are"
                + " \(by) values, else one request for each"
        } else {
            choice = "the cache when it can answer, else the listing (no endpoint takes \(by))"
        }
        options.append(try await listingOption(of: destination, by: by, context: context, serving: parent))
        return RelatedRead(relationship: "\(entity.name).\(relationship.name)", options: options, choice: choice)
    }

    /// The destination's whole listing as an option, filtered by the key path `by`: its
    /// endpoint and expected pages, or how the first fetch that needs them will learn them.
    private func listingOption(
        of destination: EntityDescription, by: String, context: RequestContext, serving parent: StoreRequest
    ) async throws -> String {
        let endpoint = try planners.planner(for: destination.name).plan(predicate: nil, sort: []).endpoint.request
        let listing = "listing: \(endpoint) filtered by \(by) in memory"
        guard
            let estimate = try await related.listingEstimate(
                of: destination, probe: false, context: context, serving: parent)
        else {
            return "\(listing), pages not known: the first fetch that weighs it reads its first page (1 request) to"
                + " learn them"
        }
        return "\(listing), \(estimate.pages) page(s) (\(estimate.source.rawValue))"
    }
}
