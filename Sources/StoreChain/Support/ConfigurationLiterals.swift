import Foundation

/// A duration as files write it: `500ms`, `30s`, `5m`, `1h`, `1d`, `1.5s`; a bare number is
/// seconds.
package struct TimeSpan: Sendable, Hashable, Decodable {
    package let duration: Duration

    package init(_ duration: Duration) {
        self.duration = duration
    }

    package init(from decoder: any Decoder) throws {
        let text = try decoder.singleValueContainer().decode(String.self)
        guard let duration = Self.parse(text) else {
            throw StoreChainError(
                .invalidPipeline, "'\(text)' is not a duration",
                suggestion: "write a number with a unit: 500ms, 30s, 5m, 1h or 1d")
        }
        self.duration = duration
    }

    /// `500ms`, `5m`, `1h`, … or `nil`.
    package static func parse(_ text: String) -> Duration? {
        let units: [(String, Double)] = [
            ("ms", 0.001), ("min", 60), ("s", 1), ("m", 60), ("h", 3_600), ("d", 86_400),
        ]
        let trimmed = text.trimmingCharacters(in: .whitespaces).lowercased()
        for (unit, seconds) in units where trimmed.hasSuffix(unit) {
            guard let number = Double(trimmed.dropLast(unit.count).trimmingCharacters(in: .whitespaces)),
                number >= 0, number.isFinite
            else { return nil }
            return .milliseconds(Int64((number * seconds * 1_000).rounded()))
        }
        guard let seconds = Double(trimmed), seconds >= 0, seconds.isFinite else { return nil }
        return .milliseconds(Int64((seconds * 1_000).rounded()))
    }
}

/// A count that must be at least one, as files write it (`page-size: 50`): zero or a negative
/// number is an error at its line, not a handler that never makes progress.
package struct PositiveCount: Sendable, Hashable, Decodable {
    package let value: Int

    package init(from decoder: any Decoder) throws {
        let value = try decoder.singleValueContainer().decode(Int.self)
        guard value > 0 else {
            throw StoreChainError(
                .invalidPipeline, "\(value) is not a count of one or more", suggestion: "write a whole number from 1 up"
            )
        }
        self.value = value
    }
}

/// A size as files write it: `512KB`, `200MB`, `1.5GB` (powers of 1,024), or bytes.
package struct ByteSize: Sendable, Hashable, Decodable {
    package let bytes: Int

    package init(bytes: Int) {
        self.bytes = bytes
    }

    package init(from decoder: any Decoder) throws {
        let text = try decoder.singleValueContainer().decode(String.self)
        guard let bytes = Self.parse(text) else {
            throw StoreChainError(
                .invalidPipeline, "'\(text)' is not a size", suggestion: "write a number with a unit: 512KB, 200MB, 1GB"
            )
        }
        self.bytes = bytes
    }

    /// `200MB`, … or `nil`.
    package static func parse(_ text: String) -> Int? {
        let kilo = 1_024.0
        let units: [(String, Double)] = [
            ("kib", kilo), ("mib", kilo * kilo), ("gib", kilo * kilo * kilo), ("kb", kilo), ("mb", kilo * kilo),
            ("gb", kilo * kilo * kilo), ("k", kilo), ("m", kilo * kilo), ("g", kilo * kilo * kilo), ("b", 1),
        ]
        let trimmed = text.trimmingCharacters(in: .whitespaces).lowercased()
        var multiplier = 1.0
        var number = Substring(trimmed)
        if let unit = units.first(where: { trimmed.hasSuffix($0.0) }) {
            multiplier = unit.1
            number = number.dropLast(unit.0.count)
        }
        guard let value = Double(number.trimmingCharacters(in: .whitespaces)), value >= 0,
            value * multiplier < Double(Int.max)
        else { return nil }
        return Int((value * multiplier).rounded())
    }
}

/// A rate as files write it: `10/s`, `600/min`, `3600/h`; a bare number is per second.
package struct Rate: Sendable, Hashable, Decodable {
    package let perSecond: Double

    package init(perSecond: Double) {
        self.perSecond = perSecond
    }

    package init(from decoder: any Decoder) throws {
        let text = try decoder.singleValueContainer().decode(String.self)
        guard let rate = Self.parse(text) else {
            throw StoreChainError(
                .invalidPipeline, "'\(text)' is not a rate",
                suggestion: "write requests per unit: 10/s, 600/min, 3600/h")
        }
        perSecond = rate
    }

    /// `10/s`, … or `nil`.
    package static func parse(_ text: String) -> Double? {
        let parts = text.lowercased().split(separator: "/", omittingEmptySubsequences: false)
            .map { $0.trimmingCharacters(in: .whitespaces) }
        guard let count = Double(parts[0]), count > 0, count.isFinite else { return nil }
        guard parts.count == 2 else { return parts.count == 1 ? count : nil }
        let seconds: Double? =
            switch parts[1] {
            case "s", "sec", "second": 1
            case "m", "min", "minute": 60
            case "h", "hour": 3_600
            case "d", "day": 86_400
            default: nil
            }
        return seconds.map { count / $0 }
    }
}
