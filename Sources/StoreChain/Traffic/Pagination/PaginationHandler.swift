/// Turns a fetch's limit and offset into the fewest backend pages.
///
/// The handler asks the terminal for one page at a time (`StoreRequest.page`); each page says how
/// the endpoint pages and whether the backend applied the whole predicate and sort. Then:
/// - the backend applied both: only the pages that cover the window are read, several at once
///   where the endpoint allows (offsets, page numbers);
/// - it applied the sort but filters in memory: pages are read in order until the window is
///   full;
/// - it did not apply the sort, or the fetch has no limit: every page is read.
///
/// A revalidation of a fetch sends each page with the validators it was read with (a 304 for one
/// page says nothing about the others). A fetch that needs more than `maxPages` fails with
/// `too-many-pages`, naming the endpoint when the pages say it. Progress goes to the
/// context's `FetchProgressKey` after every page.
///
/// A relationship fault is read the same way, one `StoreRequest.relationshipPage` at a time, in
/// the same loop, until its list ends (a list is never cut short). A to-many the terminal cannot
/// read (`no-endpoint`) whose inverse is a to-one is read as a fetch through the chain
/// (`Band/1.albums` as `Album where band.id == 1`). Other requests pass unchanged.
///
/// ```swift
/// Chain(terminal: remote) { PaginationHandler(model: model, options: .init(pageSize: 50)) }
/// ```
public struct PaginationHandler: FetchPaging {
    public let name = "pagination"
    /// The model whose keys break ties in page order.
    public let model: ObjectModel
    /// Page sizes, the most pages a walk reads, and how many are read at once.
    public let options: PaginationOptions

    /// A pager with `options`.
    public init(model: ObjectModel, options: PaginationOptions = PaginationOptions()) {
        self.model = model
        self.options = options
    }

    public func pageSize(for entity: String) -> Int? { options.pageSize(for: entity) }

    public func handle(_ request: StoreRequest, context: RequestContext, next: NextResponder) async throws
        -> StoreResponse
    {
        let fetch: FetchRequest
        var validators: Validators?
        switch request {
        case .fetch(let request): fetch = request
        case .revalidation(.fetch(let request), let cached):
            fetch = request
            validators = cached
        case .relationshipFault(let owner, let name), .revalidation(.relationshipFault(let owner, let name), _):
            // A list has no validators of its own: its pages are read again.
            let relationship = try model.requireEntity(owner.entity).requireRelationship(name)
            var walk = RelationshipPageWalk(
                relationship, of: owner, model: model, options: options, context: context, next: next)
            do {
                return try await walk.run()
            } catch let error as StoreChainError where error.code == .noEndpoint {
                guard
                    let answer = try await FaultFallback.relationship(
                        relationship, of: owner, model: model, context: context)
                else { throw error }
                return answer
            }
        case .objectFault(let id), .revalidation(.objectFault(let id), _):
            do {
                return try await next(request, context)
            } catch let error as StoreChainError where error.code == .noEndpoint {
                // The terminal reads no single object of this entity: a fetch by its key.
                guard let answer = try await FaultFallback.object(id, model: model, answeredBy: name, context: context)
                else { throw error }
                return answer
            }
        default: return try await next(request, context)
        }
        var plan = try FetchPlan.planned(fetch, model: model)
        // Narrowed once, here: each page and each retry of one then asks for the same records.
        switch try await context.services.narrowing?.narrowed(
            fetch, predicate: plan.predicate?.predicate, context: context)
        {
        case .request(let narrowed)?: plan = try FetchPlan.planned(narrowed, model: model)
        case .nothing?:
            return StoreResponse(.fetched(plan.emptyResult), info: ResponseInfo(answeredBy: name, origin: .remote))
        case nil: break
        }
        var walk = PageWalk(
            plan: plan, model: model, options: options, context: context, ifChangedSince: validators, next: next)
        return try await walk.run()
    }
}
