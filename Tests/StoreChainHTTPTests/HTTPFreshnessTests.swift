import Foundation
import StoreChain
import Testing

@testable import StoreChainHTTP

/// RFC 9111 (with RFC 5861) case by case: what a private cache reads from a response's headers.
/// Each case gives the headers and a summary of the freshness read from them: the lifetime and
/// age in seconds, the flags set, the stale allowances and the validators ("none": nothing).
@Suite struct HTTPFreshnessTests {
    /// `Sun, 06 Nov 1994 08:49:37 GMT`: the response arrives at this time unless a case says otherwise.
    static let arrival = Date(timeIntervalSince1970: 784_111_777)
    static let date = "Sun, 06 Nov 1994 08:49:37 GMT"
    static let minuteEarlier = "Sun, 06 Nov 1994 08:48:37 GMT"
    static let hourLater = "Sun, 06 Nov 1994 09:49:37 GMT"
    static let dayEarlier = "Sat, 05 Nov 1994 08:49:37 GMT"
    static let tenDaysEarlier = "Thu, 27 Oct 1994 08:49:37 GMT"

    struct Case: CustomTestStringConvertible, Sendable {
        var headers: [String: String]
        var expected: String
        /// How long the exchange took (request time = arrival − delay).
        var delay: Double = 0
        var testDescription: String {
            headers.sorted { $0.key < $1.key }.map { "\($0.key): \($0.value)" }.joined(separator: "; ")
        }
    }

    static func summary(_ freshness: ResponseFreshness) -> String {
        func seconds(_ duration: Duration) -> String {
            let value = Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
            return value == value.rounded() ? String(Int64(value)) : String(value)
        }
        var parts: [String] = []
        if freshness.noStore { parts.append("no-store") }
        if let lifetime = freshness.lifetime { parts.append("lifetime=\(seconds(lifetime))") }
        if freshness.age != .zero { parts.append("age=\(seconds(freshness.age))") }
        if let heuristic = freshness.heuristicLifetime { parts.append("heuristic=\(seconds(heuristic))") }
        if freshness.noCache { parts.append("no-cache") }
        if freshness.mustRevalidate, !freshness.noCache { parts.append("must-revalidate") }
        if let swr = freshness.staleWhileRevalidate { parts.append("swr=\(seconds(swr))") }
        if let sie = freshness.staleIfError { parts.append("sie=\(seconds(sie))") }
        if let etag = freshness.validators.etag { parts.append("etag=\(etag)") }
        if freshness.validators.lastModified != nil { parts.append("last-modified") }
        return parts.isEmpty ? "none" : parts.joined(separator: " ")
    }

    static func read(_ headers: [String: String], delay: Double = 0, status: Int = 200) -> ResponseFreshness {
        HTTPFreshness.read(
            status: status, headers: headers, requestTime: arrival.addingTimeInterval(-delay), responseTime: arrival)
    }

    static let freshnessCases: [Case] = [
        // Nothing to go on.
        Case(headers: [:], expected: "none"),
        Case(headers: ["date": date], expected: "none"),
        Case(headers: ["content-type": "application/json"], expected: "none"),
        // max-age (§5.2.2.1).
        Case(headers: ["cache-control": "max-age=60"], expected: "lifetime=60"),
        Case(headers: ["cache-control": "max-age=0"], expected: "lifetime=0"),
        Case(headers: ["cache-control": "MAX-AGE=60"], expected: "lifetime=60"),
        Case(headers: ["cache-control": "Max-Age=60"], expected: "lifetime=60"),
        Case(headers: ["cache-control": " max-age=60 "], expected: "lifetime=60"),
        Case(headers: ["cache-control": "max-age = 60"], expected: "lifetime=60"),
        Case(headers: ["cache-control": "max-age=\"60\""], expected: "lifetime=60"),
        Case(headers: ["cache-control": "public, max-age=60"], expected: "lifetime=60"),
        Case(headers: ["cache-control": "max-age=60, public"], expected: "lifetime=60"),
        Case(headers: ["cache-control": "private, max-age=60"], expected: "lifetime=60"),
        Case(headers: ["cache-control": "max-age=31536000"], expected: "lifetime=31536000"),
        Case(headers: ["cache-control": "max-age=99999999999999999999"], expected: "lifetime=2147483648"),
        Case(headers: ["cache-control": "max-age=2147483649"], expected: "lifetime=2147483648"),
        Case(headers: ["cache-control": "max-age=-1"], expected: "lifetime=0"),
        Case(headers: ["cache-control": "max-age=abc"], expected: "lifetime=0"),
        Case(headers: ["cache-control": "max-age=6o"], expected: "lifetime=0"),
        Case(headers: ["cache-control": "max-age=1.5"], expected: "lifetime=0"),
        Case(headers: ["cache-control": "max-age="], expected: "lifetime=0"),
        Case(headers: ["cache-control": "max-age"], expected: "lifetime=0"),
        Case(headers: ["cache-control": "max-age=+60"], expected: "lifetime=0"),
        // Duplicates (§4.2.1): the same value is fine, different values make it stale.
        Case(headers: ["cache-control": "max-age=60, max-age=60"], expected: "lifetime=60"),
        Case(headers: ["cache-control": "max-age=60, max-age=120"], expected: "lifetime=0"),
        Case(headers: ["cache-control": "max-age=120, max-age=60"], expected: "lifetime=0"),
        Case(headers: ["cache-control": "max-age=60, max-age=abc"], expected: "lifetime=0"),
        Case(headers: ["cache-control": "max-age=60, MAX-AGE=60"], expected: "lifetime=60"),
        // Empty list elements and unknown directives are tolerated.
        Case(headers: ["cache-control": ",,max-age=60,,"], expected: "lifetime=60"),
        Case(headers: ["cache-control": "max-age=60, x-custom=\"a, b\""], expected: "lifetime=60"),
        Case(headers: ["cache-control": "x-custom=\"max-age=5\", max-age=60"], expected: "lifetime=60"),
        Case(headers: ["cache-control": "community=\"UCI\""], expected: "none"),
        Case(headers: ["cache-control": "immutable, max-age=60"], expected: "lifetime=60"),
        // s-maxage and proxy-revalidate speak to shared caches only (§5.2.2.10, §5.2.2.8).
        Case(headers: ["cache-control": "s-maxage=600"], expected: "none"),
        Case(headers: ["cache-control": "s-maxage=600, max-age=60"], expected: "lifetime=60"),
        Case(headers: ["cache-control": "max-age=60, s-maxage=0"], expected: "lifetime=60"),
        Case(headers: ["cache-control": "max-age=60, proxy-revalidate"], expected: "lifetime=60"),
        // no-store (§5.2.2.5).
        Case(headers: ["cache-control": "no-store"], expected: "no-store"),
        Case(headers: ["cache-control": "NO-STORE"], expected: "no-store"),
        Case(headers: ["cache-control": "private, no-store"], expected: "no-store"),
        Case(headers: ["cache-control": "no-store, max-age=60"], expected: "no-store lifetime=60"),
        Case(headers: ["cache-control": "max-age=60", "pragma": "no-cache"], expected: "lifetime=60"),
        // no-cache (§5.2.2.4): unqualified means revalidate every use; with field names it only
        // forbids reusing those fields.
        Case(headers: ["cache-control": "no-cache"], expected: "no-cache"),
        Case(headers: ["cache-control": "no-cache, max-age=60"], expected: "lifetime=60 no-cache"),
        Case(headers: ["cache-control": "No-Cache"], expected: "no-cache"),
        Case(headers: ["cache-control": "no-cache=\"Set-Cookie\""], expected: "none"),
        Case(headers: ["cache-control": "no-cache=\"Set-Cookie, Set-Cookie2\", max-age=60"], expected: "lifetime=60"),
        Case(headers: ["cache-control": "no-cache, no-cache=\"Set-Cookie\""], expected: "no-cache"),
        Case(headers: ["cache-control": "no-cache", "etag": "\"v1\""], expected: "no-cache etag=\"v1\""),
        Case(
            headers: ["cache-control": "no-cache", "last-modified": dayEarlier, "date": date],
            expected: "heuristic=8640 no-cache last-modified"),
        // must-revalidate (§5.2.2.2).
        Case(headers: ["cache-control": "must-revalidate"], expected: "must-revalidate"),
        Case(headers: ["cache-control": "max-age=2, must-revalidate"], expected: "lifetime=2 must-revalidate"),
        Case(headers: ["cache-control": "Must-Revalidate, max-age=60"], expected: "lifetime=60 must-revalidate"),
        Case(
            headers: ["cache-control": "max-age=60, must-revalidate, stale-if-error=60"],
            expected: "lifetime=60 must-revalidate sie=60"),
        // RFC 5861.
        Case(headers: ["cache-control": "max-age=60, stale-while-revalidate=30"], expected: "lifetime=60 swr=30"),
        Case(headers: ["cache-control": "max-age=60, stale-if-error=86400"], expected: "lifetime=60 sie=86400"),
        Case(
            headers: ["cache-control": "max-age=60, stale-while-revalidate=30, stale-if-error=600"],
            expected: "lifetime=60 swr=30 sie=600"),
        Case(headers: ["cache-control": "stale-while-revalidate=30"], expected: "swr=30"),
        Case(headers: ["cache-control": "max-age=60, stale-while-revalidate"], expected: "lifetime=60 swr=0"),
        Case(headers: ["cache-control": "max-age=60, stale-while-revalidate=abc"], expected: "lifetime=60 swr=0"),
        Case(headers: ["cache-control": "max-age=60, stale-if-error=-5"], expected: "lifetime=60 sie=0"),
        Case(headers: ["cache-control": "max-age=60, stale-while-revalidate=\"30\""], expected: "lifetime=60 swr=30"),
        Case(headers: ["cache-control": "max-age=60, Stale-While-Revalidate=30"], expected: "lifetime=60 swr=30"),
        // Expires with Date (§5.3, §4.2.1).
        Case(headers: ["expires": hourLater, "date": date], expected: "lifetime=3600"),
        Case(headers: ["expires": date, "date": minuteEarlier], expected: "lifetime=60 age=60"),
        Case(headers: ["expires": minuteEarlier, "date": date], expected: "lifetime=0"),
        Case(headers: ["expires": date, "date": date], expected: "lifetime=0"),
        Case(headers: ["expires": hourLater, "date": date, "cache-control": "max-age=60"], expected: "lifetime=60"),
        Case(headers: ["expires": hourLater, "date": date, "cache-control": "max-age=abc"], expected: "lifetime=0"),
        Case(headers: ["expires": hourLater, "date": date, "cache-control": "public"], expected: "lifetime=3600"),
        Case(headers: ["expires": hourLater, "date": date, "cache-control": "s-maxage=5"], expected: "lifetime=3600"),
        // Expires without Date: against the time the response arrived.
        Case(headers: ["expires": hourLater], expected: "lifetime=3600"),
        Case(headers: ["expires": minuteEarlier], expected: "lifetime=0"),
        // An invalid Expires means already expired.
        Case(headers: ["expires": "0"], expected: "lifetime=0"),
        Case(headers: ["expires": "-1"], expected: "lifetime=0"),
        Case(headers: ["expires": ""], expected: "lifetime=0"),
        Case(headers: ["expires": "tomorrow"], expected: "lifetime=0"),
        Case(headers: ["expires": "Sun,  06 Nov 1994 09:49:37 GMT"], expected: "lifetime=0"),
        Case(headers: ["expires": "Sun, 06 Nov 1994 9:49:37 GMT"], expected: "lifetime=0"),
        Case(headers: ["expires": "Sun, 06 Nov 1994 09:49:37 PST"], expected: "lifetime=0"),
        Case(headers: ["expires": "\(hourLater), \(hourLater)"], expected: "lifetime=0"),
        // The other date formats (RFC 9110 §5.6.7) and a lower-case zone.
        Case(headers: ["expires": "Sunday, 06-Nov-94 09:49:37 GMT", "date": date], expected: "lifetime=3600"),
        Case(headers: ["expires": "Sun Nov  6 09:49:37 1994", "date": date], expected: "lifetime=3600"),
        Case(headers: ["expires": "Sun, 06 Nov 1994 09:49:37 gmt", "date": date], expected: "lifetime=3600"),
        Case(headers: ["expires": hourLater, "date": "Sun Nov  6 08:49:37 1994"], expected: "lifetime=3600"),
        // Age (§5.1): the first member of a list, ignored when not a number; corrected initial
        // age (§4.2.3).
        Case(headers: ["cache-control": "max-age=60", "age": "20"], expected: "lifetime=60 age=20"),
        Case(headers: ["cache-control": "max-age=60", "age": "0"], expected: "lifetime=60"),
        Case(headers: ["cache-control": "max-age=60", "age": "7200, 0"], expected: "lifetime=60 age=7200"),
        Case(headers: ["cache-control": "max-age=60", "age": "20,30"], expected: "lifetime=60 age=20"),
        Case(headers: ["cache-control": "max-age=60", "age": "-20"], expected: "lifetime=60"),
        Case(headers: ["cache-control": "max-age=60", "age": "abc"], expected: "lifetime=60"),
        Case(headers: ["cache-control": "max-age=60", "age": "1.5"], expected: "lifetime=60"),
        Case(headers: ["cache-control": "max-age=60", "age": ""], expected: "lifetime=60"),
        Case(
            headers: ["cache-control": "max-age=60", "age": "99999999999999999999"],
            expected: "lifetime=60 age=2147483648"),
        Case(headers: ["cache-control": "max-age=60", "age": "20"], expected: "lifetime=60 age=25", delay: 5),
        Case(headers: ["cache-control": "max-age=60"], expected: "lifetime=60 age=5", delay: 5),
        Case(headers: ["cache-control": "max-age=60", "age": "abc"], expected: "lifetime=60 age=5", delay: 5),
        Case(headers: ["cache-control": "max-age=60", "date": minuteEarlier], expected: "lifetime=60 age=60"),
        Case(
            headers: ["cache-control": "max-age=60", "date": minuteEarlier, "age": "10"],
            expected: "lifetime=60 age=60"),
        Case(
            headers: ["cache-control": "max-age=60", "date": minuteEarlier, "age": "100"],
            expected: "lifetime=60 age=100"),
        Case(headers: ["cache-control": "max-age=60", "date": hourLater], expected: "lifetime=60"),
        Case(headers: ["cache-control": "max-age=60", "date": "garbage", "age": "10"], expected: "lifetime=60 age=10"),
        Case(
            headers: ["cache-control": "max-age=60", "date": minuteEarlier, "age": "10"],
            expected: "lifetime=60 age=60", delay: 30),
        Case(
            headers: ["cache-control": "max-age=60", "date": minuteEarlier, "age": "50"],
            expected: "lifetime=60 age=80", delay: 30),
        Case(headers: ["expires": date, "date": minuteEarlier, "age": "30"], expected: "lifetime=60 age=60"),
        Case(headers: ["expires": hourLater, "date": date, "age": "600"], expected: "lifetime=3600 age=600"),
        // Heuristic freshness (§4.2.2): a tenth of the time since Last-Modified.
        Case(headers: ["last-modified": dayEarlier, "date": date], expected: "heuristic=8640 last-modified"),
        Case(headers: ["last-modified": tenDaysEarlier, "date": date], expected: "heuristic=86400 last-modified"),
        Case(headers: ["last-modified": dayEarlier], expected: "heuristic=8640 last-modified"),
        Case(headers: ["last-modified": date, "date": date], expected: "last-modified"),
        Case(headers: ["last-modified": hourLater, "date": date], expected: "last-modified"),
        Case(headers: ["last-modified": "yesterday", "date": date], expected: "last-modified"),
        Case(
            headers: ["last-modified": dayEarlier, "date": date, "cache-control": "max-age=60"],
            expected: "lifetime=60 heuristic=8640 last-modified"),
        // Validators.
        Case(headers: ["etag": "\"v1\""], expected: "etag=\"v1\""),
        Case(headers: ["etag": "W/\"v1\""], expected: "etag=W/\"v1\""),
        Case(headers: ["etag": " \"v1\" "], expected: "etag=\"v1\""),
        Case(headers: ["etag": ""], expected: "none"),
        Case(headers: ["etag": "\"v1\"", "cache-control": "max-age=60"], expected: "lifetime=60 etag=\"v1\""),
        Case(headers: ["etag": "W/\"\"", "cache-control": "no-cache"], expected: "no-cache etag=W/\"\""),
        // Quoted strings keep their commas.
        Case(headers: ["cache-control": "private=\"a, b\", max-age=60"], expected: "lifetime=60"),
        Case(headers: ["cache-control": "x=\"a\\\"b, c\", no-store"], expected: "no-store"),
        Case(headers: ["cache-control": "x=\"unterminated, max-age=60"], expected: "none"),
        // Several Cache-Control lines, joined by the transport.
        Case(headers: ["cache-control": "max-age=60, no-cache"], expected: "lifetime=60 no-cache"),
        Case(
            headers: ["cache-control": "public, max-age=60, must-revalidate"], expected: "lifetime=60 must-revalidate"),
    ]

    @Test func saysWhetherTheResponseHadRulesOfItsOwn() {
        #expect(!Self.read([:]).hasRules)
        #expect(!Self.read(["etag": "\"v1\"", "last-modified": Self.dayEarlier, "age": "5"]).hasRules)
        #expect(Self.read(["cache-control": "public"]).hasRules)
        #expect(Self.read(["expires": "0"]).hasRules)
    }

    /// §4.2.2: only a heuristically cacheable status may get a heuristic lifetime (a 201 or 202
    /// with `Last-Modified` was served from cache).
    @Test func heuristicFreshnessOnlyForHeuristicallyCacheableStatuses() {
        let headers = ["last-modified": Self.dayEarlier, "date": Self.date]
        let cacheable = [200, 203, 204, 206, 300, 301, 308, 404, 405, 410, 414, 501]
        for status in cacheable {
            #expect(Self.read(headers, status: status).heuristicLifetime == .seconds(8640), "status \(status)")
        }
        for status in [201, 202, 302, 303, 307, 400, 403, 409, 429, 500, 502, 503] {
            let freshness = Self.read(headers, status: status)
            #expect(freshness.heuristicLifetime == nil, "status \(status) is not heuristically cacheable")
            #expect(freshness.validators.lastModified != nil, "its validator is still kept (status \(status))")
        }
    }

    @Test(arguments: freshnessCases)
    func readsFreshness(_ testCase: Case) {
        #expect(Self.summary(Self.read(testCase.headers, delay: testCase.delay)) == testCase.expected)
    }

    static let dateCases: [(String, Double?)] = [
        ("Sun, 06 Nov 1994 08:49:37 GMT", 784_111_777),
        ("Thu, 01 Jan 1970 00:00:00 GMT", 0),
        ("Sun, 06 Nov 1994 08:49:37 gmt", 784_111_777),
        ("sun, 06 nov 1994 08:49:37 GMT", 784_111_777),
        ("SUN, 06 NOV 1994 08:49:37 GMT", 784_111_777),
        ("Sunday, 06-Nov-94 08:49:37 GMT", 784_111_777),
        ("sunday, 06-nov-94 08:49:37 gmt", 784_111_777),
        ("Thursday, 01-Jan-70 00:00:00 GMT", 0),
        ("Sun Nov  6 08:49:37 1994", 784_111_777),
        ("Sun Nov 16 08:49:37 1994", 784_975_777),
        ("sun nov  6 08:49:37 1994", 784_111_777),
        ("Sat, 29 Feb 2020 12:00:00 GMT", 1_582_977_600),
        ("Tue, 31 Dec 2999 23:59:59 GMT", 32_503_679_999),
        ("Sun, 06 Nov 1994 23:59:60 GMT", 784_166_400),
        // Not dates.
        ("", nil),
        ("yesterday", nil),
        ("0", nil),
        ("-1", nil),
        ("Sun, 06 Nov 1994 08:49:37 PST", nil),
        ("Sun, 06 Nov 1994 08:49:37 UTC", nil),
        ("Sun, 06 Nov 1994 08:49:37 +0000", nil),
        ("Sun, 06 Nov 1994 08:49:37", nil),
        ("Sun,  06 Nov 1994 08:49:37 GMT", nil),
        ("Sun, 06  Nov 1994 08:49:37 GMT", nil),
        ("Sun, 06 Nov 1994  08:49:37 GMT", nil),
        (" Sun, 06 Nov 1994 08:49:37 GMT", nil),
        ("Sun, 6 Nov 1994 08:49:37 GMT", nil),
        ("Sun, 06 Nov 94 08:49:37 GMT", nil),
        ("Sun, 06 Nov 1994 8:49:37 GMT", nil),
        ("Sun, 06 Nov 1994 08:9:37 GMT", nil),
        ("Sun, 06 Nov 1994 08:49 GMT", nil),
        ("Sun, 06 Nov 1994 24:00:00 GMT", nil),
        ("Sun, 06 Nov 1994 08:60:00 GMT", nil),
        ("Sun, 32 Nov 1994 08:49:37 GMT", nil),
        ("Sun, 31 Nov 1994 08:49:37 GMT", nil),
        ("Sun, 29 Feb 2021 08:49:37 GMT", nil),
        ("Sun, 00 Nov 1994 08:49:37 GMT", nil),
        ("Sun, 06 Foo 1994 08:49:37 GMT", nil),
        ("Xyz, 06 Nov 1994 08:49:37 GMT", nil),
        ("Sun 06 Nov 1994 08:49:37 GMT", nil),
        ("Sunday, 06-Nov-1994 08:49:37 GMT", nil),
        ("Sunday, 6-Nov-94 08:49:37 GMT", nil),
        ("Sun, 06-Nov-94 08:49:37 GMT", nil),
        ("Sunday, 06-Nov-94 08:49:37 PST", nil),
        ("Sun Nov 6 08:49:37 1994", nil),
        ("Sun Nov   6 08:49:37 1994", nil),
        ("Sun Nov  6 08:49:37 94", nil),
        ("Sun Nov 06 08:49:37 1994 GMT", nil),
    ]

    @Test(arguments: dateCases)
    func parsesHTTPDates(_ text: String, _ expected: Double?) {
        #expect(HTTPDate.parse(text, now: Self.arrival) == expected.map(Date.init(timeIntervalSince1970:)))
    }

    @Test func anRFC850YearMoreThanFiftyYearsAheadIsInThePastCentury() {
        let now = Date(timeIntervalSince1970: 1_795_000_000)  // 2026
        let parse = { (text: String) in HTTPDate.parse(text, now: now).map { Calendar.utc.component(.year, from: $0) } }
        #expect(parse("Monday, 01-Jan-70 00:00:00 GMT") == 2070)
        #expect(parse("Friday, 01-Jan-77 00:00:00 GMT") == 1977)
        #expect(parse("Friday, 01-Jan-99 00:00:00 GMT") == 1999)
        #expect(parse("Saturday, 01-Jan-00 00:00:00 GMT") == 2000)
        #expect(parse("Thursday, 06-Nov-26 08:49:37 GMT") == 2026)
    }
}

extension Calendar {
    fileprivate static var utc: Calendar {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC") ?? calendar.timeZone
        return calendar
    }
}
