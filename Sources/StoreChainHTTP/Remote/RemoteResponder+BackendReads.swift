import StoreChain

/// The remote adapter describes its endpoints to the query engine: how each relationship is
/// mapped, what its query planners push down, how its listings page.
extension RemoteResponder: BackendReads {
    public func relationshipSource(_ relationship: String, of entity: String) -> RelationshipSource {
        guard let mapping = mapper.options(for: entity).relationships[relationship] else { return .unmapped }
        return switch mapping {
        case .foreignKey, .link: .keyInRecord(mapping.mappedAs)
        case .embedded: .embedded(mapping.mappedAs)
        case .endpoint: .ownRequest(mapping.mappedAs)
        }
    }

    public func pushesDown(_ predicate: FetchPredicate, of entity: String) throws -> Bool {
        try !planners.planner(for: entity).plan(predicate: predicate, sort: []).pushed.isEmpty
    }

    public func listingPaging(of entity: String) throws -> ListingPaging {
        switch try planners.planner(for: entity).plan(predicate: nil, sort: []).endpoint.paging {
        case .pages(_, _, let size, _)?, .offset(_, _, let size)?, .cursor(_, _, _, let size)?: .pages(size: size)
        case .link?: .sizeNotStated
        case nil: .unpaged
        }
    }

    public func readsObjectsByKey(of entity: String) -> Bool {
        mapper.options(for: entity).get != nil
    }
}

extension RemoteRelationship {
    /// How the relationship is mapped, for messages: "as the foreign key 'band_id'".
    var mappedAs: String {
        switch self {
        case .foreignKey(let field): "as the foreign key '\(field)'"
        case .link(let field): "as the link '\(field)'"
        case .embedded(let field): "as the embedded record '\(field)'"
        case .endpoint(let request, _, _): "to its own endpoint \(request)"
        }
    }
}
