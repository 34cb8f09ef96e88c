import Foundation

/// ISO-8601 dates without locale or calendar machinery: `2001-05-03`, `2001-05-03T10:20:30Z`,
/// `2001-05-03T10:20:30.250+02:00`. Printing gives UTC with `Z`, and milliseconds when present.
package enum ISO8601 {
    /// Parses a date, a date-time in UTC or with an offset, with optional fractional seconds.
    package static func parse(_ text: String) -> Date? {
        var scanner = DigitScanner(Array(text.utf8))
        guard let year = scanner.number(digits: 4), scanner.skip("-"),
            let month = scanner.number(digits: 2), scanner.skip("-"),
            let day = scanner.number(digits: 2),
            (1...12).contains(month), (1...daysIn(month: month, year: year)).contains(day)
        else { return nil }
        var seconds = Double(daysFromCivil(year: year, month: month, day: day)) * 86_400
        if scanner.atEnd { return Date(timeIntervalSince1970: seconds) }
        guard scanner.skip("T") || scanner.skip("t") || scanner.skip(" "),
            let hour = scanner.number(digits: 2), scanner.skip(":"),
            let minute = scanner.number(digits: 2), hour < 24, minute < 60
        else { return nil }
        var second = 0.0
        if scanner.skip(":") {
            guard let whole = scanner.number(digits: 2), whole < 61 else { return nil }
            second = Double(whole)
            if scanner.skip(".") || scanner.skip(",") {
                let (fraction, count) = scanner.digits()
                guard count > 0 else { return nil }
                second += Double(fraction) / pow(10, Double(count))
            }
        }
        seconds += Double(hour * 3600 + minute * 60) + second
        if scanner.skip("Z") || scanner.skip("z") {
            return scanner.atEnd ? Date(timeIntervalSince1970: seconds) : nil
        }
        let sign: Double
        if scanner.skip("+") {
            sign = 1
        } else if scanner.skip("-") {
            sign = -1
        } else {
            return nil
        }
        guard let offsetHours = scanner.number(digits: 2) else { return nil }
        _ = scanner.skip(":")
        let offsetMinutes = scanner.number(digits: 2) ?? 0
        guard scanner.atEnd, offsetHours < 24, offsetMinutes < 60 else { return nil }
        return Date(timeIntervalSince1970: seconds - sign * Double(offsetHours * 3600 + offsetMinutes * 60))
    }

    /// `2001-05-03T10:20:30Z`, or `2001-05-03T10:20:30.250Z` when there are milliseconds.
    package static func format(_ date: Date) -> String {
        let totalMilliseconds = (date.timeIntervalSince1970 * 1000).rounded()
        let milliseconds = Int(totalMilliseconds.truncatingRemainder(dividingBy: 1000) + 1000) % 1000
        let totalSeconds = Int(((totalMilliseconds - Double(milliseconds)) / 1000).rounded())
        let days = Int((Double(totalSeconds) / 86_400).rounded(.down))
        let secondsOfDay = totalSeconds - days * 86_400
        let (year, month, day) = civilFromDays(days)
        var text = pad(year, 4) + "-" + pad(month, 2) + "-" + pad(day, 2)
        text += "T" + pad(secondsOfDay / 3600, 2) + ":" + pad(secondsOfDay / 60 % 60, 2)
        text += ":" + pad(secondsOfDay % 60, 2)
        if milliseconds != 0 { text += "." + pad(milliseconds, 3) }
        return text + "Z"
    }

    private static func pad(_ value: Int, _ width: Int) -> String {
        let digits = String(abs(value))
        let padded = String(repeating: "0", count: max(0, width - digits.count)) + digits
        return value < 0 ? "-" + padded : padded
    }

    private static func isLeap(_ year: Int) -> Bool {
        year % 4 == 0 && (year % 100 != 0 || year % 400 == 0)
    }

    private static func daysIn(month: Int, year: Int) -> Int {
        switch month {
        case 2: isLeap(year) ? 29 : 28
        case 4, 6, 9, 11: 30
        default: 31
        }
    }

    /// Days since 1970-01-01 in the proleptic Gregorian calendar (Howard Hinnant's algorithm).
    static func daysFromCivil(year: Int, month: Int, day: Int) -> Int {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yearOfEra = y - era * 400
        let dayOfYear = (153 * (month + (month > 2 ? -3 : 9)) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }

    static func civilFromDays(_ days: Int) -> (year: Int, month: Int, day: Int) {
        let z = days + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let dayOfEra = z - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let monthPrime = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * monthPrime + 2) / 5 + 1
        let month = monthPrime < 10 ? monthPrime + 3 : monthPrime - 9
        return (yearOfEra + era * 400 + (month <= 2 ? 1 : 0), month, day)
    }
}

private struct DigitScanner {
    let bytes: [UInt8]
    var position = 0

    init(_ bytes: [UInt8]) { self.bytes = bytes }

    var atEnd: Bool { position == bytes.count }

    mutating func skip(_ character: Unicode.Scalar) -> Bool {
        guard position < bytes.count, bytes[position] == UInt8(character.value) else { return false }
        position += 1
        return true
    }

    mutating func number(digits count: Int) -> Int? {
        guard position + count <= bytes.count else { return nil }
        var value = 0
        for byte in bytes[position..<position + count] {
            guard byte >= 0x30, byte <= 0x39 else { return nil }
            value = value * 10 + Int(byte - 0x30)
        }
        position += count
        return value
    }

    mutating func digits() -> (value: Int, count: Int) {
        var value = 0
        var count = 0
        while position < bytes.count, bytes[position] >= 0x30, bytes[position] <= 0x39 {
            if count < 9 { value = value * 10 + Int(bytes[position] - 0x30) }
            count += 1
            position += 1
        }
        return (value, min(count, 9))
    }
}
