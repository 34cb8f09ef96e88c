#if Postgres
    import StoreChain
    import StoreChainPostgres

    extension HandlerRegistry {
        /// Registers `postgres-cache`, and `rate-limit` with its `shared` option (a limit kept in
        /// PostgreSQL for several processes), in place of the one without it.
        mutating func registerPostgres() {
            register("postgres-cache", options: PostgresCacheFileOptions.self, placement: .cache) { options, context in
                try context.model.checkEntities(options.cache.expiry.entityTTL.keys.sorted(), option: "entity-ttl")
                // A bad URL or schema is reported even when only checking the file, which connects to nothing.
                try options.database.check()
                if context.validatesOnly { return MemoryCache(model: context.model) }
                return try PostgresCache(
                    model: context.model, database: options.database, namespace: context.cacheNamespace,
                    options: options.cache, user: context.naming("postgres-cache"))
            }
            register("rate-limit", options: RateLimitFileOptions.self, placement: .traffic) { options, context in
                guard let shared = options.shared else { return RateLimitHandler(options: options.limit) }
                try shared.check()
                if context.validatesOnly { return RateLimitHandler(options: options.limit) }
                let limit = try PostgresSharedRateLimit(shared, user: context.naming("rate-limit"))
                return RateLimitHandler(limiter: RateLimiter(options: options.limit, shared: limit))
            }
        }
    }

    extension HandlerRegistry.Context {
        /// The handler's type and where the pipeline file writes it (`rate-limit at music.yml:7`),
        /// for its log lines.
        fileprivate func naming(_ type: String) -> String {
            type + (location.map { " at \($0)" } ?? "")
        }
    }

    /// `postgres-cache`: the options both caches take and the database's, each read by its own type.
    struct PostgresCacheFileOptions: Decodable {
        let cache: CacheOptions
        let database: PostgresCacheDatabase

        init(from decoder: any Decoder) throws {
            cache = try CacheOptions(from: decoder)
            database = try PostgresCacheDatabase(from: decoder)
        }
    }

    /// `rate-limit`: the limit, and where processes share it (`shared`), each read by its own type.
    struct RateLimitFileOptions: Decodable {
        let limit: RateLimitOptions
        let shared: SharedRateLimitDatabase?

        private enum CodingKeys: String, CodingKey {
            case shared
        }

        init(from decoder: any Decoder) throws {
            limit = try RateLimitOptions(from: decoder)
            shared = try decoder.container(keyedBy: CodingKeys.self).decodeIfPresent(
                SharedRateLimitDatabase.self, forKey: .shared)
        }
    }
#endif
