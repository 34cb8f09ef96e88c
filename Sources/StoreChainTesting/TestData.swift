import StoreChain

/// Small helpers for building the values handler tests need.
public enum TestData {
    /// A node with an integer key: `TestData.node("Band", 1, ["name": "Low"])`. The key
    /// attribute `id` is set too.
    public static func node(
        _ entity: String, _ key: Int, _ attributes: AttributeValues = [:],
        relationships: [String: RelationshipValue] = [:]
    ) -> Node {
        var attributes = attributes
        attributes["id"] = .integer(key)
        return Node(
            id: ObjectID(entity: entity, key: .integer(key)), attributes: attributes, relationships: relationships)
    }

    /// A fetch request from a predicate format: `try TestData.fetch("Band", where: "name BEGINSWITH 'L'")`.
    public static func fetch(
        _ entity: String, where format: String? = nil, sort: [FetchSortDescriptor] = [], limit: Int? = nil,
        offset: Int = 0
    ) throws -> FetchRequest {
        FetchRequest(
            entity: entity,
            predicate: try format.map { format throws(StoreChainError) in try FetchPredicate(format: format) },
            sortDescriptors: sort, fetchLimit: limit, fetchOffset: offset)
    }

    /// A response answering a fetch with objects.
    public static func fetched(_ nodes: [Node], by name: String = "test", origin: ResponseInfo.Origin = .remote)
        -> StoreResponse
    {
        StoreResponse(.fetched(.objects(nodes)), info: ResponseInfo(answeredBy: name, origin: origin))
    }
}
