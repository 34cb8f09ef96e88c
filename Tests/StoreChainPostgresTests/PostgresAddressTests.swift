// The shared cache's tests: built with the Postgres trait (`.ci/run` enables every trait).
#if Postgres
    import StoreChain
    import StoreChainPostgres
    import Testing

    @Suite struct PostgresAddressTests {
        @Test func readsEveryPartOfTheURL() throws {
            let address = try PostgresAddress(
                url: "postgresql://app%2Bworker:p%3As%40ss@db.internal:6543/cache?sslmode=require")
            #expect(address.username == "app+worker")
            #expect(address.password == "p:s@ss")
            #expect(address.host == "db.internal")
            #expect(address.port == 6543)
            #expect(address.database == "cache")
            #expect(address.requiresTLS)
            #expect(
                address.description == "postgres://app+worker@db.internal:6543/cache", "no password in descriptions")

            let defaults = try PostgresAddress(url: "postgres://app@localhost")
            #expect(
                defaults.port == 5432 && defaults.database == nil && defaults.password == nil && !defaults.requiresTLS)
        }

        @Test(arguments: [
            ("mysql://app:secret@db/cache", "does not start with postgres://"),
            ("postgres://db.internal/cache", "names no user"),
            ("postgres://app:secret@/cache", "names no host"),
            ("postgres://app:secret@db/cache/extra", "more than a database name"),
            (
                "postgres://app:secret@db/cache?connect_timeout=3",
                "an option this client does not read: 'connect_timeout'"
            ),
        ])
        func aBadURLSaysWhatIsWrongWithoutItsPassword(_ url: String, _ problem: String) throws {
            let error = try #require(throws: StoreChainError.self) { try PostgresAddress(url: url) }
            #expect(error.code == .invalidPipeline)
            #expect(error.message.contains(problem), "\(error)")
            #expect(error.location?.path == "url")
            #expect(!error.description.contains("secret"), "the password is never repeated: \(error)")
            #expect(error.suggestion != nil)
        }

        @Test func aSchemaNameMustBeAPlainIdentifier() throws {
            for bad in ["Cache", "1cache", "cache; DROP TABLE x", "", String(repeating: "a", count: 64)] {
                let error = try #require(throws: StoreChainError.self) {
                    try PostgresCacheDatabase(url: "postgres://app@db/cache", schema: bad).check()
                }
                #expect(error.location?.path == "schema", "\(bad): \(error)")
            }
            try PostgresCacheDatabase(url: "postgres://app@db/cache", schema: "music_cache_2").check()
        }
    }
#endif
