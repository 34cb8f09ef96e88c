import Foundation
import StoreChain
import Testing

/// `catch StoreChainError.rateLimited` matches by code, like GRDB's `catch DatabaseError.SQLITE_BUSY`.
@Suite struct ErrorMatchingTests {
    private func caught(_ error: any Error) -> String {
        do {
            throw error
        } catch StoreChainError.rateLimited {
            return "rate-limited"
        } catch StoreChainError.saveFailed {
            return "save-failed"
        } catch {
            return "other"
        }
    }

    struct Unrelated: Error {}

    @Test func catchClausesMatchByCode() {
        #expect(caught(StoreChainError(.rateLimited, "slow down")) == "rate-limited")
        #expect(caught(StoreChainError(.saveFailed, "Album/1: no")) == "save-failed")
        #expect(caught(StoreChainError(.transport, "reset")) == "other")
        #expect(caught(Unrelated()) == "other")
        let error: any Error = StoreChainError(.timedOut, "late")
        switch error {
        case StoreChainError.timedOut: break
        default: Issue.record("a switch matches by code too")
        }
        #expect(StoreChainError.incompleteData == StoreChainError.Code.incompleteData)
    }

    struct Refused: Error, CustomStringConvertible {
        let port: Int
        var description: String { "connection refused on port \(port)" }
    }

    @Test func theUnderlyingErrorIsKeptAsThrown() throws {
        let error = StoreChainError(.transport, "GET /bands failed", underlying: Refused(port: 8080))
        #expect((error.underlying as? Refused)?.port == 8080)
        #expect(error.description == "GET /bands failed (connection refused on port 8080)")
        var detailed = error
        detailed.detail = "body starts: {}"
        #expect(detailed.description == "GET /bands failed (body starts: {})", "detail speaks in its place")
        #expect(error == StoreChainError(.transport, "GET /bands failed", underlying: Refused(port: 8080)))
        #expect(error != StoreChainError(.transport, "GET /bands failed", underlying: Refused(port: 9090)))
        // A real one: the file system's error behind an unreadable data file.
        let missing = URL(filePath: "/nonexistent-\(UUID())/music.json")
        let model = try ObjectModel([])
        let thrown = #expect(throws: StoreChainError.self) { try JSONFileStore(contentsOf: missing, model: model) }
        #expect(thrown?.code == .unreadableFile)
        #expect(thrown?.underlying is CocoaError, "\(String(describing: thrown?.underlying))")
    }
}
