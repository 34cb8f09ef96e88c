import Foundation
import StoreChain

extension Inspector {
    /// What each cache that can be looked into holds.
    struct CacheView: Codable {
        var name: String
        var location: String
        var objectsByEntity: [String: Int]
        var queries: Int
        var collections: [String]
        var expired: Int
        var bytes: Int
        var error: String?
    }

    struct ClearInput: Codable {
        /// The cache's name (`memory-cache`); `nil`: every cache.
        var cache: String?
    }

    struct ClearAnswer: Codable {
        var cleared: [String]
        var error: String?
    }

    struct ForgetInput: Codable {
        /// The cache's name; `nil`: every cache.
        var cache: String?
        var entity: String
    }

    struct ForgetAnswer: Codable {
        /// Objects removed, per cache.
        var forgotten: [String: Int]
        var error: String?
    }

    private var caches: [any CacheInspecting] { chain.handlers.handlers(of: (any CacheInspecting).self) }

    func cachesView() async -> [CacheView] {
        var views: [CacheView] = []
        for cache in caches {
            do {
                let statistics = try await cache.statistics()
                views.append(
                    CacheView(
                        name: cache.name, location: cache.location, objectsByEntity: statistics.objectsByEntity,
                        queries: statistics.queries, collections: statistics.collections, expired: statistics.expired,
                        bytes: statistics.payloadBytes))
            } catch {
                views.append(
                    CacheView(
                        name: cache.name, location: cache.location, objectsByEntity: [:], queries: 0, collections: [],
                        expired: 0, bytes: 0, error: "\(error)"))
            }
        }
        return views
    }

    /// The caches named `name` (`nil`: every one), or why there are none: for the actions.
    private func caches(named name: String?) -> (caches: [any CacheInspecting], error: String?) {
        let chosen = caches.filter { name == nil || $0.name == name }
        guard chosen.isEmpty else { return (chosen, nil) }
        return ([], "no cache named '\(name ?? "")'; the chain's caches: " + caches.map(\.name).joined(separator: ", "))
    }

    func clearCaches(named name: String?) async -> ClearAnswer {
        let (chosen, missing) = caches(named: name)
        if let missing { return ClearAnswer(cleared: [], error: missing) }
        var cleared: [String] = []
        for cache in chosen {
            do {
                try await cache.clear()
                cleared.append(cache.name)
            } catch {
                return ClearAnswer(cleared: cleared, error: "clearing \(cache.name) failed: \(error)")
            }
        }
        return ClearAnswer(cleared: cleared)
    }

    /// Removes `entity`'s objects, complete collection and queries from the chosen caches.
    func forget(_ input: ForgetInput) async -> ForgetAnswer {
        let (chosen, missing) = caches(named: input.cache)
        if let missing { return ForgetAnswer(forgotten: [:], error: missing) }
        if let model = pipeline?.model, model.entity(named: input.entity) == nil {
            return ForgetAnswer(
                forgotten: [:],
                error: "the model has no entity '\(input.entity)'; its entities: "
                    + model.entities.map(\.name).sorted().joined(separator: ", "))
        }
        var forgotten: [String: Int] = [:]
        for cache in chosen {
            do {
                forgotten[cache.name] = try await cache.forget(entity: input.entity)
            } catch {
                return ForgetAnswer(
                    forgotten: forgotten, error: "forgetting \(input.entity) in \(cache.name) failed: \(error)")
            }
        }
        return ForgetAnswer(forgotten: forgotten)
    }
}
