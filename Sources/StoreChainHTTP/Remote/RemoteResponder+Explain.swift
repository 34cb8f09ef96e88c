import Foundation
import StoreChain

/// How the remote adapter would serve a fetch, worked out without sending anything.
public struct FetchExplanation: Sendable, Hashable {
    /// The endpoint the planner picks, as its template.
    public var endpoint: String
    /// The conjuncts the backend applies.
    public var pushed: [String]
    /// What is applied in memory afterwards: the predicate (re-checked whole), a sort the
    /// backend does not do, the window.
    public var inMemory: [String]
    /// The backend applies the whole predicate exactly and returns records in the requested
    /// order, so a pager can read only the pages covering the window.
    public var exact: Bool
    /// The endpoint's paging style and page size, when it pages.
    public var paging: PageInfo.Style?
    public var pageSize: Int?
    /// Key paths through relationships loaded to evaluate the request.
    public var follows: [String]
    /// Every endpoint considered that could not serve the request, and why.
    public var rejected: [String]
}

extension RemoteResponder {
    /// Which endpoint a fetch would use, what is pushed down and what runs in memory.
    public func explain(_ request: FetchRequest) throws(StoreChainError) -> FetchExplanation {
        let plan = try FetchPlan(request, model: model)
        let planner = try planner(for: request.entity)
        let queryPlan = try planner.plan(predicate: plan.predicate?.predicate, sort: request.sortDescriptors)
        var inMemory: [String] = []
        if let predicate = request.predicate, !queryPlan.filterApplied {
            inMemory.append("filter: \(predicate.format)")
        }
        if !request.sortDescriptors.isEmpty, !queryPlan.sortPushed {
            inMemory.append("sort: " + request.sortDescriptors.map(\.description).joined(separator: ", "))
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
        return FetchExplanation(
            endpoint: queryPlan.endpoint.request, pushed: queryPlan.pushed.map(\.description), inMemory: inMemory,
            exact: queryPlan.filterApplied && queryPlan.orderApplied, paging: style, pageSize: size,
            follows: neededKeyPaths(request, entity: plan.entity).map { $0.joined(separator: ".") },
            rejected: planner.rejections(predicate: plan.predicate?.predicate, sort: request.sortDescriptors))
    }
}
