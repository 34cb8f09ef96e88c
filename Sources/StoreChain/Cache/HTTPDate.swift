import Foundation

/// Parses the HTTP date format (`Sun, 06 Nov 1994 08:49:37 GMT`, RFC 9110 §5.6.7), as used by
/// `Expires`, `Date` and `Last-Modified`.
public enum HTTPDate {
    private static let months = ["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"]

    public static func parse(_ text: String) -> Date? {
        // "Sun, 06 Nov 1994 08:49:37 GMT" → ["06", "Nov", "1994", "08:49:37", "GMT"]
        let parts = text.split(separator: ",", maxSplits: 1).last?.split(separator: " ").map(String.init) ?? []
        guard parts.count == 5, parts[4] == "GMT", let day = Int(parts[0]), let year = Int(parts[2]),
            let month = months.firstIndex(of: parts[1].lowercased())
        else { return nil }
        let time = parts[3].split(separator: ":").compactMap { Int($0) }
        guard time.count == 3, (1...31).contains(day), (0...23).contains(time[0]), (0...59).contains(time[1]),
            (0...60).contains(time[2])
        else { return nil }
        let days = ISO8601.daysFromCivil(year: year, month: month + 1, day: day)
        return Date(timeIntervalSince1970: TimeInterval(days * 86_400 + time[0] * 3_600 + time[1] * 60 + time[2]))
    }
}
