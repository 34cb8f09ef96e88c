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
}
