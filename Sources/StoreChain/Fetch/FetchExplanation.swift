import Foundation

/// How a terminal would serve a fetch, worked out without sending anything (`FetchExplaining`).
package struct FetchExplanation: Sendable, Hashable {
    /// The endpoint the planner picks, as its template.
    package var endpoint: String
    /// The conjuncts the backend applies.
    package var pushed: [String]
    /// What is applied in memory afterwards: the predicate (re-checked whole), a sort the
    /// backend does not do, the window.
    package var inMemory: [String]
    /// The backend applies the whole predicate exactly and returns records in the requested
    /// order, so a pager can read only the pages covering the window.
    package var exact: Bool
    /// The endpoint's paging style and page size, when it pages.
    package var paging: PageInfo.Style?
    package var pageSize: Int?
    /// Key paths through relationships loaded to evaluate the request.
    package var follows: [String]
    /// For each relationship on those key paths that needs requests of its own: the ways to read
    /// it, with their expected requests, and which one is chosen.
    package var relatedReads: [RelatedRead]
    /// Every endpoint considered that could not serve the request, and why.
    package var rejected: [String]
    /// The conditions on key paths that are read as the related objects' keys when it runs (so
    /// that the endpoint named here filters), each with how; empty when none is.
    package var narrowed: [String]

    package init(
        endpoint: String, pushed: [String], inMemory: [String], exact: Bool, paging: PageInfo.Style?,
        pageSize: Int?, follows: [String], relatedReads: [RelatedRead], rejected: [String], narrowed: [String] = []
    ) {
        self.narrowed = narrowed
        self.endpoint = endpoint
        self.pushed = pushed
        self.inMemory = inMemory
        self.exact = exact
        self.paging = paging
        self.pageSize = pageSize
        self.follows = follows
        self.relatedReads = relatedReads
        self.rejected = rejected
    }
}

/// The ways to read one relationship for the objects of a fetch, with the requests each is
/// expected to cost, and the rule that picks one when the fetch runs (the number of owners and
/// keys is known only then).
package struct RelatedRead: Sendable, Hashable {
    /// `EntityDescription.relationship`.
    package var relationship: String
    /// Each option: how, and its expected requests.
    package var options: [String]
    /// How one option is chosen.
    package var choice: String

    package init(relationship: String, options: [String], choice: String) {
        self.relationship = relationship
        self.options = options
        self.choice = choice
    }
}

/// A terminal that can say how it would serve a fetch without sending anything upstream: the
/// endpoint, what the backend applies and what runs in memory (`storechain explain`).
package protocol FetchExplaining: StoreResponder {
    /// How `request` would be served. Sends nothing upstream; what the caches know (the size of
    /// a listing they hold) may be asked through `context`'s chain with `.cacheOnly`.
    func explain(_ request: FetchRequest, context: RequestContext) async throws -> FetchExplanation
}
