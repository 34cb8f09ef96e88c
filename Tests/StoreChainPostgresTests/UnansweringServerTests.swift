// The shared cache's tests: built with the Postgres trait (`.ci/run` enables every trait).
#if Postgres
    import Foundation
    import Logging
    import StoreChain
    import StoreChainTestSupport
    import Testing

    @testable import StoreChainPostgres

    /// A server that does not answer in time (a network that dropped, a connection closed under a
    /// statement, here a statement that sleeps): the use ends after `answerTimeout` with the
    /// reason, and the connection is closed, instead of holding the request that sent it until the
    /// server answers, if ever (PostgresNIO sets no time limit on a statement). CI saw a client of
    /// the shared cache wait 120 s after a restart of its server.
    @Suite struct UnansweringServerTests {
        @Test func aStatementNotAnsweredInTimeFailsAndTheNextUseOpensAnotherConnection() async throws {
            let connections = PostgresConnections(
                address: try PostgresAddress(url: try TestPostgres.url()), user: "postgres-cache at test.yml:3",
                answerTimeout: .milliseconds(500), logger: Logger(label: "test"))
            let error = await #expect(throws: StoreChainError.self) {
                try await connections.withSharedConnection { connection in
                    try await connection.query("SELECT pg_sleep(60)", logger: Logger(label: "test")).collect().count
                }
            }
            #expect(error?.code == .sharedState, "\(String(describing: error))")
            #expect(
                error?.message.contains("did not answer a statement within 0.5 seconds") == true,
                "\(String(describing: error))")
            // The connection the statement hung on is closed; the next statement gets a new one.
            let answer = try await connections.withSharedConnection { connection in
                try await connection.query("SELECT 1", logger: Logger(label: "test")).collect().first?.decode(Int.self)
            }
            #expect(answer == 1)
        }
    }
#endif
