/// The plans of the fetch requests a model's handlers asked for last, by request, shared by every
/// copy of the model: a request crossing the chain (the caches, the pager, the terminal's pages)
/// is planned once. At most `capacity` are kept, all dropped when full (an app makes a bounded
/// set of distinct fetches; one that makes more plans again what it drops).
package final class FetchPlanMemo: Sendable {
    private struct State {
        var plans: [FetchRequest: FetchPlan] = [:]
        /// Plans made over the model, here or not (`FetchPlan.init`).
        var made = 0
        /// Plans made here, one per request it did not keep.
        var madeHere = 0
    }

    private let state = Locked(State())
    private let capacity: Int

    package init(capacity: Int = 256) {
        self.capacity = capacity
    }

    /// How many plans have been made over the model (for tests that count them): more than
    /// `madeHere` when a handler plans a request itself instead of asking here.
    package var made: Int { state.withLock { $0.made } }
    /// How many plans it has made, one per request it did not keep.
    package var madeHere: Int { state.withLock { $0.madeHere } }

    /// Counts a plan made over the model.
    func noteMade() {
        state.withLock { $0.made += 1 }
    }

    /// The plan of `request`, made by `make` unless kept (a request that fails to plan is not).
    func plan(for request: FetchRequest, make: () throws(StoreChainError) -> FetchPlan) throws(StoreChainError)
        -> FetchPlan
    {
        if let kept = state.withLock({ $0.plans[request] }) { return kept }
        let plan = try make()
        state.withLock { state in
            state.madeHere += 1
            if state.plans.count >= capacity { state.plans.removeAll(keepingCapacity: true) }
            state.plans[request] = plan
        }
        return plan
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
