import Foundation

/// How long cached data stays fresh: a default time to live, one per entity, and whether a
/// response's own `Cache-Control` / `Expires` headers override them.
public struct CacheExpiry: Sendable, Hashable {
    /// The time to live for entities without their own.
    public var defaultTTL: Duration
    /// Time to live per entity name.
    public var entityTTL: [String: Duration]
    /// Whether `Cache-Control: max-age`, `no-store`, `no-cache` and `Expires` in a response
    /// override the configured time to live.
    public var honoursResponseHeaders: Bool

    public init(
        defaultTTL: Duration = .seconds(300), entityTTL: [String: Duration] = [:], honoursResponseHeaders: Bool = true
    ) {
        self.defaultTTL = defaultTTL
        self.entityTTL = entityTTL
        self.honoursResponseHeaders = honoursResponseHeaders
    }

    /// What to do with a response's data.
    public enum Decision: Sendable, Hashable {
        /// Keep it, fresh until the date.
        case store(expiresAt: Date)
        /// Do not keep it (`Cache-Control: no-store`).
        case doNotStore
    }

    /// When data of `entity` fetched at `now` with this response metadata expires.
    public func decision(for entity: String, metadata: [String: String], now: Date) -> Decision {
        let ttl = entityTTL[entity] ?? defaultTTL
        let configured = Decision.store(expiresAt: now.addingTimeInterval(ttl.timeInterval))
        guard honoursResponseHeaders else { return configured }
        if let cacheControl = metadata["cache-control"] {
            let directives = Self.directives(cacheControl)
            if directives["no-store"] != nil { return .doNotStore }
            if directives["no-cache"] != nil { return .store(expiresAt: now) }
            if let maxAge = directives["max-age"].flatMap({ $0 }).flatMap(Int.init), maxAge >= 0 {
                let age = metadata["age"].flatMap(Int.init) ?? 0
                return .store(expiresAt: now.addingTimeInterval(TimeInterval(max(0, maxAge - age))))
            }
        }
        if let expires = metadata["expires"] {
            // An unparseable Expires means "already expired" (RFC 9111 §5.3).
            guard let date = HTTPDate.parse(expires) else { return .store(expiresAt: now) }
            if let served = metadata["date"].flatMap(HTTPDate.parse) {
                return .store(expiresAt: now.addingTimeInterval(max(0, date.timeIntervalSince(served))))
            }
            return .store(expiresAt: max(now, date))
        }
        return configured
    }

    /// `max-age=60, no-cache` → ["max-age": "60", "no-cache": nil].
    static func directives(_ header: String) -> [String: String?] {
        var result: [String: String?] = [:]
        for part in header.split(separator: ",") {
            let pieces = part.split(separator: "=", maxSplits: 1).map {
                $0.trimmingCharacters(in: .whitespaces).trimmingCharacters(in: CharacterSet(charactersIn: "\""))
            }
            guard let name = pieces.first?.lowercased(), !name.isEmpty else { continue }
            result[name] = pieces.count > 1 ? pieces[1] : String?.none
        }
        return result
    }
}
