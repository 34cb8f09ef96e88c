import Foundation
import StoreChain

/// Reads what an HTTP response says about its own freshness, as a private cache must (RFC 9111
/// with the RFC 5861 extensions), into the `ResponseFreshness` the caches use:
///
/// - **Storing**: `no-store` forbids it; `private` and `public` change nothing for a private
///   cache, and `s-maxage` and `proxy-revalidate`, which speak to shared caches, are ignored.
/// - **Lifetime** (§4.2.1): `max-age`, else `Expires` − `Date` (`Date` missing: the time the
///   response arrived); an invalid `Expires` means already expired. A directive given twice with
///   different values, or with a value that is not a number, makes the response stale.
/// - **Age** (§4.2.3): the corrected initial age, the larger of the apparent age
///   (`response_time` − `Date`) and `Age` (0 without one) plus the time the exchange took. `Age`
///   uses its first value and is ignored when that is not a number.
/// - **Heuristic** (§4.2.2): a tenth of the time between `Last-Modified` and `Date`, for a
///   cache that asks for it, and only for a status code that is heuristically cacheable by
///   default (§15.1 of RFC 9110): a 201 or 202 never gets a guessed lifetime.
/// - **Revalidation**: `no-cache` (without field names) means every use is revalidated;
///   `must-revalidate` forbids serving it stale; `stale-while-revalidate=N` and
///   `stale-if-error=N` allow it for N seconds.
/// - **Validators**: `ETag` (strong or weak, kept as sent) and `Last-Modified`.
public enum HTTPFreshness {
    /// The greatest delta-seconds value a cache needs to represent (RFC 9111 §1.2.2).
    static let greatestDelta: Int64 = 2_147_483_648

    /// The status codes that are heuristically cacheable (RFC 9110 §15.1), the only ones a
    /// cache may give a heuristic lifetime (RFC 9111 §4.2.2).
    static let heuristicallyCacheable: Set<Int> = [200, 203, 204, 206, 300, 301, 308, 404, 405, 410, 414, 501]

    /// The freshness of a response with this status and these headers (lower-case names;
    /// several lines of one field joined with ", "), requested at `requestTime` and received at
    /// `responseTime`.
    public static func read(
        status: Int = 200, headers: [String: String], requestTime: Date, responseTime: Date
    ) -> ResponseFreshness {
        let now = responseTime
        let directives = CacheControl(headers["cache-control"] ?? "")
        let date = headers["date"].flatMap { HTTPDate.parse($0.trimmed, now: now) }
        let expires = headers["expires"]
        var lifetime: Duration?
        if let maxAge = directives.seconds("max-age") {
            lifetime = maxAge
        } else if let expires {
            // An Expires that is not one valid date (two lines, say) means already expired.
            lifetime =
                HTTPDate.parse(expires.trimmed, now: now).map {
                    .milliseconds(Int64(($0.timeIntervalSince(date ?? now) * 1_000).rounded()))
                } ?? .zero
        }
        var heuristic: Duration?
        if heuristicallyCacheable.contains(status),
            let lastModified = headers["last-modified"].flatMap({ HTTPDate.parse($0.trimmed, now: now) })
        {
            let since = (date ?? now).timeIntervalSince(lastModified)
            if since > 0 { heuristic = .milliseconds(Int64((since * 100).rounded())) }
        }
        return ResponseFreshness(
            noStore: directives.has("no-store"), lifetime: lifetime.map { max(.zero, $0) },
            heuristicLifetime: heuristic, age: age(headers["age"], date: date, requestTime: requestTime, now: now),
            noCache: directives.hasUnqualified("no-cache"), mustRevalidate: directives.has("must-revalidate"),
            staleWhileRevalidate: directives.seconds("stale-while-revalidate"),
            staleIfError: directives.seconds("stale-if-error"),
            hasRules: !directives.isEmpty || expires != nil,
            validators: Validators(
                etag: headers["etag"]?.trimmed.nonEmpty, lastModified: headers["last-modified"]?.trimmed.nonEmpty))
    }

    /// The corrected initial age (RFC 9111 §4.2.3).
    static func age(_ header: String?, date: Date?, requestTime: Date, now: Date) -> Duration {
        let apparent = date.map { max(0, now.timeIntervalSince($0)) } ?? 0
        let delay = max(0, now.timeIntervalSince(requestTime))
        // A list-valued Age (two lines, "7200, 0") counts by its first member.
        let first = header?.split(separator: ",", omittingEmptySubsequences: false).first.map { String($0).trimmed }
        // age_value is 0 without a valid Age (§4.2.3); the time the exchange took still counts.
        let ageValue = Double(first.flatMap(deltaSeconds) ?? 0) + delay
        return .milliseconds(Int64((max(apparent, ageValue) * 1_000).rounded()))
    }

    /// A delta-seconds value (digits only), saturated at 2^31; `nil` when it is not one.
    static func deltaSeconds(_ text: String) -> Int64? {
        guard !text.isEmpty, text.allSatisfy({ $0.isASCII && $0.isNumber }) else { return nil }
        return Int64(text).map { min($0, greatestDelta) } ?? greatestDelta
    }
}

/// The directives of a `Cache-Control` field (RFC 9111 §5.2): names compared without case,
/// arguments as tokens or quoted strings, commas inside quotes not separating directives.
struct CacheControl {
    /// Every directive's arguments, in order (`nil` for a directive without one).
    private var directives: [String: [String?]] = [:]

    init(_ field: String) {
        for element in Self.elements(field) {
            let pieces = element.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            let name = String(pieces[0]).trimmed.lowercased()
            guard !name.isEmpty else { continue }
            var argument = pieces.count > 1 ? String(pieces[1]).trimmed : nil
            if let quoted = argument, quoted.count >= 2, quoted.hasPrefix("\""), quoted.hasSuffix("\"") {
                argument = String(quoted.dropFirst().dropLast()).replacingOccurrences(of: "\\", with: "")
            }
            directives[name, default: []].append(argument)
        }
    }

    var isEmpty: Bool { directives.isEmpty }

    func has(_ name: String) -> Bool { directives[name] != nil }

    /// `no-cache` without field names (`no-cache="Set-Cookie"` only forbids reusing those
    /// fields, which a client does not keep).
    func hasUnqualified(_ name: String) -> Bool {
        directives[name]?.contains { $0 == nil || $0?.isEmpty == true } ?? false
    }

    /// A delta-seconds directive's value; zero (stale) when it is given twice with different
    /// values or with one that is not a number (RFC 9111 §4.2.1, §1.2.2).
    func seconds(_ name: String) -> Duration? {
        guard let arguments = directives[name] else { return nil }
        let values = arguments.map { $0.flatMap(HTTPFreshness.deltaSeconds) }
        guard let first = values.first, let seconds = first, values.allSatisfy({ $0 == seconds }) else {
            return .zero
        }
        return .seconds(seconds)
    }

    /// The comma-separated elements of a list, with commas inside quoted strings kept.
    private static func elements(_ field: String) -> [String] {
        var elements: [String] = []
        var current = ""
        var quoted = false
        var escaped = false
        for character in field {
            if escaped {
                escaped = false
            } else if quoted, character == "\\" {
                escaped = true
            } else if character == "\"" {
                quoted.toggle()
            } else if character == ",", !quoted {
                elements.append(current)
                current = ""
                continue
            }
            current.append(character)
        }
        elements.append(current)
        return elements
    }
}

extension String {
    fileprivate var trimmed: String { trimmingCharacters(in: .whitespaces) }
    fileprivate var nonEmpty: String? { isEmpty ? nil : self }
}
