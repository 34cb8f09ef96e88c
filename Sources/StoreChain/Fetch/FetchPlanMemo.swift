/// The plans of the fetch requests a model's handlers asked for last, by request, shared by every
/// copy of the model: a request crossing the chain (the caches, the pager, the terminal's pages)
/// is planned once (`KeptValues`).
package final class FetchPlanMemo: Sendable {
    private let plans: KeptValues<FetchRequest, FetchPlan>
    /// Plans made over the model, here or not (`FetchPlan.init`), and here.
    private let counts = Locked((made: 0, madeHere: 0))

    package init(capacity: Int = 256) {
        plans = KeptValues(capacity: capacity)
    }

    /// How many plans have been made over the model (for tests that count them): more than
    /// `madeHere` when a handler plans a request itself instead of asking here.
    package var made: Int { counts.withLock { $0.made } }
    /// How many plans it has made, one per request it did not keep.
    package var madeHere: Int { counts.withLock { $0.madeHere } }

    /// Counts a plan made over the model.
    func noteMade() {
        counts.withLock { $0.made += 1 }
    }

    /// The plan of `request`, made by `make` unless kept (a request that fails to plan is not).
    func plan(for request: FetchRequest, make: () throws(StoreChainError) -> FetchPlan) throws(StoreChainError)
        -> FetchPlan
    {
        try plans.value(for: request) { () throws(StoreChainError) in
            let plan = try make()
            counts.withLock { $0.madeHere += 1 }
            return plan
        }
    }
}

extension FetchPlan {
    /// The plan of `request` over `model`, made once for every handler that asks while the
    /// model's memo keeps it (`FetchPlanMemo`).
    ///
    /// - Throws: `StoreChainError` naming the entity, key path or value at fault.
    package static func planned(_ request: FetchRequest, model: ObjectModel) throws(StoreChainError) -> FetchPlan {
        try model.plans.plan(for: request) { () throws(StoreChainError) in try FetchPlan(request, model: model) }
    }
}
