import Foundation

/// Parses HTTP dates (RFC 9110 §5.6.7), as `Expires`, `Date`, `Last-Modified` and `Retry-After`
/// carry them, in the three formats a recipient must accept:
///
/// - IMF-fixdate: `Sun, 06 Nov 1994 08:49:37 GMT`
/// - RFC 850: `Sunday, 06-Nov-94 08:49:37 GMT` (a two-digit year more than 50 years ahead of
///   `now` is in the past century)
/// - asctime: `Sun Nov  6 08:49:37 1994`
///
/// Names are read without regard to case; anything else (a double space, a one-digit hour, a
/// day the month does not have, a zone other than GMT) is not a date.
public enum HTTPDate {
    private static let months = ["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"]
    private static let days = ["mon", "tue", "wed", "thu", "fri", "sat", "sun"]
    private static let longDays = ["monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"]
    private static let utc: Calendar = {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC") ?? calendar.timeZone
        return calendar
    }()

    /// The date `text` names, or `nil` when it is not an HTTP date.
    public static func parse(_ text: String, now: Date) -> Date? {
        let fields = text.split(separator: " ", omittingEmptySubsequences: false).map { $0.lowercased() }
        if fields.count == 6, fields[0].hasSuffix(",") {
            // IMF-fixdate: "sun," "06" "nov" "1994" "08:49:37" "gmt"
            guard days.contains(String(fields[0].dropLast())), fields[5] == "gmt", fields[1].count == 2,
                fields[3].count == 4, let year = Int(fields[3]), let day = Int(fields[1])
            else { return nil }
            return date(year: year, month: fields[2], day: day, time: fields[4])
        }
        if fields.count == 4, fields[0].hasSuffix(",") {
            // RFC 850: "sunday," "06-nov-94" "08:49:37" "gmt"
            let parts = fields[1].split(separator: "-", omittingEmptySubsequences: false).map(String.init)
            guard longDays.contains(String(fields[0].dropLast())), fields[3] == "gmt", parts.count == 3,
                parts[0].count == 2, parts[2].count == 2, let day = Int(parts[0]), let shortYear = Int(parts[2]),
                let parsed = date(year: 1900 + shortYear, month: parts[1], day: day, time: fields[2])
            else { return nil }
            return inTheRightCentury(parsed, now: now)
        }
        // asctime: "sun" "nov" "" "6" "08:49:37" "1994", or "sun" "nov" "16" "08:49:37" "1994"
        var asctime = fields
        if asctime.count == 6, asctime[2].isEmpty, asctime[3].count == 1 { asctime.remove(at: 2) }
        guard asctime.count == 5, days.contains(asctime[0]), asctime[2].count == (fields.count == 6 ? 1 : 2),
            asctime[4].count == 4, let day = Int(asctime[2]), let year = Int(asctime[4])
        else { return nil }
        return date(year: year, month: asctime[1], day: day, time: asctime[3])
    }

    private static func date(year: Int, month name: String, day: Int, time: String) -> Date? {
        let clock = time.split(separator: ":", omittingEmptySubsequences: false)
        guard let month = months.firstIndex(of: name), clock.count == 3, clock.allSatisfy({ $0.count == 2 }),
            let hour = Int(clock[0]), let minute = Int(clock[1]), let second = Int(clock[2]),
            (0...23).contains(hour), (0...59).contains(minute), (0...60).contains(second), day >= 1
        else { return nil }
        let calendar = utc
        let components = DateComponents(year: year, month: month + 1, day: day)
        // A day the month does not have (31 Feb) is not a date.
        guard let start = calendar.date(from: components),
            calendar.component(.day, from: start) == day && calendar.component(.month, from: start) == month + 1
        else { return nil }
        return start.addingTimeInterval(TimeInterval(hour * 3_600 + minute * 60 + second))
    }

    /// A two-digit year read as 19xx, moved to the most recent century that does not put it
    /// more than 50 years after `now`.
    private static func inTheRightCentury(_ date: Date, now: Date) -> Date {
        let calendar = utc
        var result = date
        while let later = calendar.date(byAdding: .year, value: 100, to: result),
            calendar.date(byAdding: .year, value: 50, to: now).map({ later <= $0 }) ?? false
        {
            result = later
        }
        return result
    }
}
