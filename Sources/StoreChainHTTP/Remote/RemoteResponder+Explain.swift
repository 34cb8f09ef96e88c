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
    /// For each relationship on those key paths that is read through its own endpoint: the ways
    /// to read it, with their expected requests, and which one is chosen.
    public var relatedReads: [RelatedRead]
    /// Every endpoint considered that could not serve the request, and why.
    public var rejected: [String]
}

/// The ways to read one relationship for the objects of a fetch, with the requests each is
/// expected to cost, and the rule that picks one when the fetch runs (the number of owners is
/// known only then).
public struct RelatedRead: Sendable, Hashable {
    /// `Entity.relationship`.
    public var relationship: String
    /// Each option: how, and its expected requests.
    public var options: [String]
    /// How one option is chosen.
    public var choice: String
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
            relatedReads: try relatedReads(along: neededKeyPaths(request, entity: plan.entity), from: plan.entity),
            rejected: planner.rejections(predicate: plan.predicate?.predicate, sort: request.sortDescriptors))
    }

    /// The choices `relationshipValues` makes at run time for the endpoint relationships on
    /// `paths`, each with its expected cost.
    private func relatedReads(along paths: [[String]], from root: Entity) throws(StoreChainError) -> [RelatedRead] {
        var reads: [RelatedRead] = []
        var seen: Set<String> = []
        for path in paths {
            var entity = root
            for name in path {
                guard let relationship = entity.relationship(named: name),
                    let destination = model.entity(named: relationship.destination)
                else { break }
                defer { entity = destination }
                guard case .endpoint(let text)? = mapper.options(for: entity.name).relationships[name],
                    seen.insert("\(entity.name).\(name)").inserted
                else { continue }
                var options = [
                    "cached: 0 requests when the caches hold every \(destination.name) fresh",
                    "per \(entity.name): \(text), 1 request or more for each",
                ]
                var choice = "the cache when it can answer, else one request per \(entity.name)"
                if let listing = try destinationListing(of: relationship, destination: destination) {
                    let by = listing.keyPath.joined(separator: ".")
                    if let pages = listing.pages {
                        options.append("listing: \(listing.endpoint) grouped by \(by), \(pages) page(s)")
                        choice =
                            "the cache when it can answer, else the listing for more than \(pages) \(entity.name)"
                            + " object(s), else one request per \(entity.name)"
                    } else {
                        options.append(
                            "listing: \(listing.endpoint) grouped by \(by), pages not known until one of them is read")
                        choice += " until the listing's size is known"
                    }
                }
                reads.append(RelatedRead(relationship: "\(entity.name).\(name)", options: options, choice: choice))
            }
        }
        return reads
    }
}
