/// The pages of one relationship's own list (`GET /albums/{id}/tracks`), read by the pager below
/// the caches: a relationship fault becomes one `StoreRequest.relationshipPage` per page, read
/// in the same loop as a fetch's pages (`PageSequence`), and the answer is every page's objects
/// in the backend's order. A list is never cut at a page: past `maxPages` it fails.
struct RelationshipPageWalk {
    private let owner: ObjectID
    private let relationship: RelationshipDescription
    private let model: ObjectModel
    private let context: RequestContext
    private let next: NextResponder
    private var sequence: PageSequence

    init(
        _ relationship: RelationshipDescription, of owner: ObjectID, model: ObjectModel, options: PaginationOptions,
        context: RequestContext, next: NextResponder
    ) {
        self.owner = owner
        self.relationship = relationship
        self.model = model
        self.context = context
        self.next = next
        let name = relationship.name
        sequence = PageSequence(reading: "reading \(owner).\(name)", options: options, pageSize: nil) { page in
            try Self.members(
                of: try await next(.relationshipPage(owner, relationship: name, page), context), page: page,
                of: owner, name)
        }
    }

    /// Reads every page; a terminal that does not page answers the whole list with its first.
    mutating func run() async throws -> StoreResponse {
        try sequence.reserve(1)
        let firstPage = PageRequest(.record(0))
        let first = try await next(.relationshipPage(owner, relationship: relationship.name, firstPage), context)
        guard first.info.page != nil else {
            return try await FaultFallback.withTheirRecords(
                first, of: owner, relationship, model: model, context: context)
        }
        sequence.add([
            sequence.place(
                try Self.members(of: first, page: firstPage, of: owner, relationship.name), asked: firstPage,
                after: nil)
        ])
        // Several pages at once only where the list's end is known: a wave past it would ask
        // for pages that are not there.
        let endKnown = sequence.total != nil || sequence.lastStart != nil
        try await sequence.readOn(inWaves: endKnown, end: nil) { _ in false }
        let pages = sequence.pages
        var ids: [ObjectID] = []
        var related: [Node] = []
        var seen: Set<ObjectID> = []
        for node in pages.flatMap(\.nodes) where seen.insert(node.id).inserted {
            ids.append(node.id)
            related.append(node)
        }
        for node in pages.flatMap(\.related) where seen.insert(node.id).inserted { related.append(node) }
        var info = first.info
        // As fresh as its least fresh page; one page's validators are not the list's.
        info.freshness = ResponseFreshness.combining(pages.compactMap(\.info.freshness))
        info.page = nil
        info.pagesRead = sequence.pagesRead
        info.exchanges = pages.reduce(0) { $0 + $1.info.exchanges }
        info.skippedRecords = pages.reduce(0) { $0 + $1.info.skippedRecords }
        return StoreResponse(
            .relationship(relationship.isToMany ? .toMany(ids) : .toOne(ids.first)), related: related, info: info)
    }

    /// A page's objects in the backend's order (each with its record), the objects that came
    /// with them, and what the answer says.
    private static func members(of response: StoreResponse, page: PageRequest, of owner: ObjectID, _ name: String)
        throws -> (nodes: [Node], related: [Node], info: ResponseInfo)
    {
        let byID = Dictionary(response.related.map { ($0.id, $0) }, uniquingKeysWith: { first, _ in first })
        let members = try response.relationshipValue().objectIDs
        var nodes: [Node] = []
        for id in members {
            guard let node = byID[id] else {
                throw StoreChainError(
                    .invalidResponse,
                    "\(response.info.answeredBy) answered \(page) of \(owner).\(name) with \(id) but not its record",
                    suggestion: "a terminal answers a relationship page with the records of the objects it names")
            }
            nodes.append(node)
        }
        let named = Set(members)
        return (nodes, response.related.filter { !named.contains($0.id) }, response.info)
    }
}
