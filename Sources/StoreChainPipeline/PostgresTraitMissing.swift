import StoreChain

extension HandlerRegistry {
    /// What a build without the `Postgres` trait registers: `postgres-cache` and `rate-limit`'s
    /// `shared` option are still known, so a pipeline that names them fails with how to turn
    /// the trait on (instead of "unknown handler type"). Compiled in every build, so that its
    /// test runs with the trait too.
    mutating func registerPostgresTraitMissing() {
        register("postgres-cache", options: AnyOptions.self, placement: .cache) { _, context in
            throw Self.postgresTraitMissing("'postgres-cache'", at: context.location)
        }
        register("rate-limit", options: LocalRateLimitOptions.self, placement: .traffic) { options, context in
            guard !options.namesShared else {
                throw Self.postgresTraitMissing(
                    "rate-limit's 'shared' option",
                    at: StoreChainError.Location(file: context.location?.file, path: "shared"))
            }
            return RateLimitHandler(options: options.limit)
        }
    }

    private static func postgresTraitMissing(_ what: String, at location: StoreChainError.Location?)
        -> StoreChainError
    {
        StoreChainError(
            .invalidPipeline, "\(what) needs StoreChain's 'Postgres' trait, which this build leaves out",
            at: location,
            suggestion: "depend on StoreChain with .package(url: …, from: …, traits: [\"Postgres\"]), "
                + "or build this package with 'swift build --traits Postgres'")
    }
}

/// Options read only so that none of them is reported as unknown.
private struct AnyOptions: Decodable {
    private struct AnyKey: CodingKey {
        let stringValue: String
        var intValue: Int? { nil }
        init?(stringValue: String) { self.stringValue = stringValue }
        init?(intValue: Int) { nil }
    }

    init(from decoder: any Decoder) throws {
        if let options = try? decoder.container(keyedBy: AnyKey.self) { _ = options.allKeys }
    }
}

/// `rate-limit` without the trait: the limit, and whether the file asks for a shared one.
private struct LocalRateLimitOptions: Decodable {
    let limit: RateLimitOptions
    let namesShared: Bool

    private enum CodingKeys: String, CodingKey {
        case shared
    }

    init(from decoder: any Decoder) throws {
        limit = try RateLimitOptions(from: decoder)
        namesShared = try decoder.container(keyedBy: CodingKeys.self).contains(.shared)
    }
}
