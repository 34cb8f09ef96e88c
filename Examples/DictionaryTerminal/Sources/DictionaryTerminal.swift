import StoreChain

/// A terminal over records that come from anywhere but HTTP: `records` hands it an entity's
/// records in the source's own order (in the example, a closure over an in-process dictionary),
/// and it serves them a page at a time as they are, with the relationships the records hold.
///
/// It filters, sorts and loads nothing. In a `Chain`, the pager the chain places in front of it
/// reads its pages, evaluates key-path predicates and sorts (reading the related objects through
/// the chain), answers windows and counts, and reads a to-many the records leave out through its
/// to-one inverse; caches in front of it keep what it answered, as for any terminal.
///
/// ```swift
/// let terminal = DictionaryTerminal(model: model, pageSize: 50) { entity in store[entity] ?? [] }
/// let chain = Chain(terminal: terminal) {
///     CacheHandler(name: "memory", model: model, storage: MemoryCacheStorage())
/// }
/// ```
public struct DictionaryTerminal: PagedResponder {
    public let name = "dictionary"
    public let model: ObjectModel
    /// Records per page, unless a pager asks for another size.
    public let pageSize: Int
    private let records: @Sendable (String) -> [Node]

    /// A terminal over `records`, which gives an entity's records in the source's order.
    public init(model: ObjectModel, pageSize: Int = 10, records: @escaping @Sendable (String) -> [Node]) {
        self.model = model
        self.pageSize = pageSize
        self.records = records
    }

    /// The chain's own pager, with its defaults.
    public var defaultPagination: PaginationOptions { PaginationOptions() }

    public func respond(to request: StoreRequest, context: RequestContext) async throws -> StoreResponse {
        let info = ResponseInfo(answeredBy: name, origin: .localStore)
        switch request {
        case .page(let fetch, let page):
            return try self.page(of: fetch.entity, at: page)
        case .objectFault(let id):
            return StoreResponse(.object(records(id.entity).first { $0.id == id }), info: info)
        case .relationshipFault(let owner, let relationship), .relationshipPage(let owner, let relationship, _):
            guard let node = records(owner.entity).first(where: { $0.id == owner }) else {
                throw StoreChainError(.unavailable, "\(owner) is not in the dictionary")
            }
            guard let value = node.relationships[relationship],
                let destination = model.entity(named: owner.entity)?.relationship(named: relationship)?.destination
            else {
                // The pager reads it another way (through the inverse), or says why it cannot.
                throw StoreChainError(.noEndpoint, "the records of \(owner.entity) do not hold '\(relationship)'")
            }
            let targets = Set(value.objectIDs)
            return StoreResponse(
                .relationship(value), related: records(destination).filter { targets.contains($0.id) }, info: info)
        case .revalidation(let request, _):
            return try await respond(to: request, context: context)
        case .fetch:
            throw StoreChainError(
                .invalidRequest, "a dictionary terminal answers a page at a time",
                suggestion: "send requests through a Chain, whose pager asks for pages")
        case .save, .changes:
            throw StoreChainError(.noEndpoint, "a dictionary terminal is read-only")
        }
    }

    /// The records from `page`'s position on, as many as a page holds, and where the next page is.
    private func page(of entity: String, at page: PageRequest) throws(StoreChainError) -> StoreResponse {
        guard case .record(let start) = page.position else {
            throw StoreChainError(.invalidRequest, "a dictionary terminal pages by record position, not \(page)")
        }
        let all = records(entity)
        let size = max(1, page.size ?? pageSize)
        let slice = Array(all.dropFirst(start).prefix(size))
        let end = start + slice.count
        var info = ResponseInfo(answeredBy: name, origin: .localStore, applied: .nothing)
        info.page = PageInfo(
            style: .offset, size: size, start: start, records: slice.count, next: end < all.count ? .record(end) : nil,
            listing: .nothing, total: all.count, wholeCollection: true)
        return StoreResponse(.fetched(.objects(slice)), info: info)
    }
}
