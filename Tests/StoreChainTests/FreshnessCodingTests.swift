import Foundation
import Testing

@testable import StoreChain

/// Freshness as cache files hold it (PostgreSQL stores it as JSON; SQLite stores the page
/// validators and the rules as JSON): the validators became one type, and what was stored before
/// reads the same and is written the same.
@Suite struct FreshnessCodingTests {
    /// Written by the release before `Validators` was the one validator type (durations as
    /// `Duration` encodes itself).
    static var storedBefore: String {
        let sixty = String(decoding: (try? JSONEncoder().encode(Duration.seconds(60))) ?? Data(), as: UTF8.self)
        let zero = String(decoding: (try? JSONEncoder().encode(Duration.zero)) ?? Data(), as: UTF8.self)
        return """
            {"fetchedAt":0,"expiresAt":60,"etag":"\\"listing\\"","lastModified":"Wed, 21 Oct 2026 07:28:00 GMT",\
            "pageValidators":[{"position":{"record":{"_0":0}},"size":10,"etag":"\\"page-1\\""},\
            {"position":{"token":{"_0":"abc"}},"lastModified":"Thu, 22 Oct 2026 07:28:00 GMT"}],\
            "rules":{"noStore":false,"lifetime":\(sixty),"age":\(zero),"noCache":false,"mustRevalidate":false,\
            "hasRules":true,"etag":"\\"listing\\""}}
            """
    }

    @Test func freshnessStoredBeforeReadsItsValidators() throws {
        let freshness = try JSONDecoder().decode(Freshness.self, from: Data(Self.storedBefore.utf8))
        #expect(freshness.validators.etag == "\"listing\"")
        #expect(freshness.validators.lastModified == "Wed, 21 Oct 2026 07:28:00 GMT")
        #expect(
            freshness.validators.pages == [
                PageValidator(position: .record(0), size: 10, validators: Validators(etag: "\"page-1\"")),
                PageValidator(
                    position: .token("abc"), size: nil,
                    validators: Validators(lastModified: "Thu, 22 Oct 2026 07:28:00 GMT")),
            ])
        #expect(freshness.rules?.lifetime == .seconds(60))
        #expect(freshness.rules?.validators.isEmpty == true, "the validators are the freshness's, not the rules'")
    }

    @Test func freshnessIsWrittenWithTheKeysItWasStoredWith() throws {
        let freshness = try JSONDecoder().decode(Freshness.self, from: Data(Self.storedBefore.utf8))
        let written = try JSONSerialization.jsonObject(with: JSONEncoder().encode(freshness)) as? [String: Any]
        #expect(
            Set(written?.keys ?? [:].keys) == [
                "fetchedAt", "expiresAt", "etag", "lastModified", "pageValidators", "rules",
            ])
        let pages = written?["pageValidators"] as? [[String: Any]]
        #expect(Set(pages?.first?.keys ?? [:].keys) == ["position", "size", "etag"])
        let rules = written?["rules"] as? [String: Any]
        #expect(rules?["etag"] == nil && rules?["validators"] == nil, "rules are stored without validators")
        #expect(try JSONDecoder().decode(Freshness.self, from: JSONEncoder().encode(freshness)) == freshness)
    }

    @Test func rulesKeptInFreshnessLeaveTheValidatorsToIt() {
        let rules = ResponseFreshness(lifetime: .seconds(60), validators: Validators(etag: "\"v1\""))
        let expiry = CacheExpiry()
        let now = Date(timeIntervalSince1970: 0)
        let kept = expiry.freshness(for: "Band", rules: rules, now: now, validators: true)
        #expect(kept?.validators == Validators(etag: "\"v1\""))
        #expect(kept?.rules?.validators.isEmpty == true)
        #expect(kept?.rules?.lifetime == .seconds(60))
    }
}
