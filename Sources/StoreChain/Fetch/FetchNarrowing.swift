/// A terminal that reads a fetch's conditions on related objects as those objects' keys before
/// the fetch is planned, where its backend filters by keys but not by the condition
/// (`album.band.name == "X"` on Track read as `album.id IN {…}`). A pager asks it once per fetch,
/// before the first page, so every page and every retry of one carries the same narrowed
/// request and the related objects are fetched once.
package protocol FetchNarrowing: StoreResponder {
    /// `request` narrowed, or `nil` when narrowing would not let the backend filter. `predicate`
    /// is the request's as its `FetchPlan` compiled it. The related objects' keys are read by
    /// fetches through `context`'s chain.
    func narrowed(_ request: FetchRequest, predicate: FetchPredicate?, context: RequestContext) async throws
        -> NarrowedFetch?
}

/// What a fetch becomes once its conditions on related objects are read as keys.
package enum NarrowedFetch: Sendable {
    /// The fetch with each such condition replaced by the keys it allows.
    case request(FetchRequest)
    /// A condition allows no related object: nothing matches.
    case nothing
}

extension FetchPlan {
    /// The answer when nothing matches, in the request's result type.
    package var emptyResult: FetchResult {
        execute(over: [], source: [ObjectID: Node]())
    }
}
