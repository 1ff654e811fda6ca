import Foundation

/// An instant in event time, in milliseconds since 1970-01-01T00:00:00Z.
///
/// The core never reads a clock: every time it uses comes from an event's
/// `at` (RFC 3339), parsed and formatted here without Foundation's date
/// formatters so that it is fast and gives the same text on every platform.
public struct EventTime: Sendable, Hashable, Comparable, Codable, CustomStringConvertible {
    /// Milliseconds since the Unix epoch.
    public var milliseconds: Int64

    public init(milliseconds: Int64) {
        self.milliseconds = milliseconds
    }

    /// The instant of a `Date`, for shells that advance time by the wall clock.
    public init(_ date: Date) {
        self.milliseconds = Int64((date.timeIntervalSince1970 * 1000).rounded(.down))
    }

    /// Parses RFC 3339 (`2026-11-22T03:00:00Z`, `2026-11-22T12:00:00.250+09:00`);
    /// `nil` when the text is not a valid RFC 3339 date-time.
    public init?(rfc3339 text: String) {
        guard let milliseconds = RFC3339.parse(text) else { return nil }
        self.milliseconds = milliseconds
    }

    /// The instant `seconds` later.
    public func adding(seconds: Int64) -> EventTime {
        EventTime(milliseconds: milliseconds + seconds * 1000)
    }

    /// The instant `milliseconds` later.
    public func adding(milliseconds delta: Int64) -> EventTime {
        EventTime(milliseconds: milliseconds + delta)
    }

    /// Whole seconds since the Unix epoch (rounded down), as APNs' `apns-expiration` wants.
    public var unixSeconds: Int64 {
        milliseconds >= 0 ? milliseconds / 1000 : (milliseconds - 999) / 1000
    }

    /// RFC 3339 in UTC: `2026-11-22T03:00:00Z`, with `.sss` only when there are milliseconds.
    public var rfc3339: String { RFC3339.format(milliseconds) }

    public var description: String { rfc3339 }

    public static func < (lhs: EventTime, rhs: EventTime) -> Bool { lhs.milliseconds < rhs.milliseconds }

    public init(from decoder: any Decoder) throws {
        let text = try decoder.singleValueContainer().decode(String.self)
        guard let time = EventTime(rfc3339: text) else {
            throw DecodingError.dataCorrupted(
                .init(codingPath: decoder.codingPath, debugDescription: "not an RFC 3339 date-time: \(text)"))
        }
        self = time
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(rfc3339)
    }
}

enum RFC3339 {
    static func parse(_ text: String) -> Int64? {
        var text = text
        return text.withUTF8(parse(utf8:))
    }

    private static func parse(utf8 bytes: UnsafeBufferPointer<UInt8>) -> Int64? {
        var index = 0

        func digits(_ count: Int) -> Int? {
            guard index + count <= bytes.count else { return nil }
            var value = 0
            for _ in 0..<count {
                let byte = bytes[index]
                guard byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9") else { return nil }
                value = value * 10 + Int(byte - UInt8(ascii: "0"))
                index += 1
            }
            return value
        }
        /// Whether the next byte is one of `characters` (ASCII), and if so steps past it.
        func expect(_ characters: StaticString) -> Bool {
            guard index < bytes.count else { return false }
            let byte = bytes[index]
            for offset in 0..<characters.utf8CodeUnitCount where characters.utf8Start[offset] == byte {
                index += 1
                return true
            }
            return false
        }

        guard let year = digits(4), expect("-"), let month = digits(2), expect("-"), let day = digits(2),
            expect("Tt"), let hour = digits(2), expect(":"), let minute = digits(2), expect(":"),
            let second = digits(2)
        else { return nil }
        guard (1...12).contains(month), day >= 1, day <= daysIn(month: month, year: year),
            hour < 24, minute < 60, second < 60
        else { return nil }
        var millisecond = 0
        if index < bytes.count, bytes[index] == UInt8(ascii: ".") {
            index += 1
            var fractionDigits = 0
            while index < bytes.count, bytes[index] >= UInt8(ascii: "0"), bytes[index] <= UInt8(ascii: "9") {
                if fractionDigits < 3 { millisecond = millisecond * 10 + Int(bytes[index] - UInt8(ascii: "0")) }
                fractionDigits += 1
                index += 1
            }
            guard (1...9).contains(fractionDigits) else { return nil }
            if fractionDigits < 3 {
                for _ in fractionDigits..<3 { millisecond *= 10 }
            }
        }
        var offsetMinutes = 0
        if expect("Zz") {
            offsetMinutes = 0
        } else if index < bytes.count, bytes[index] == UInt8(ascii: "+") || bytes[index] == UInt8(ascii: "-") {
            let sign = bytes[index] == UInt8(ascii: "-") ? -1 : 1
            index += 1
            guard let offsetHour = digits(2), expect(":"), let offsetMinute = digits(2),
                offsetHour < 24, offsetMinute < 60
            else { return nil }
            offsetMinutes = sign * (offsetHour * 60 + offsetMinute)
        } else {
            return nil
        }
        guard index == bytes.count else { return nil }
        let days = daysFromCivil(year: year, month: month, day: day)
        let seconds = Int64(days) * 86_400 + Int64(hour * 3600 + minute * 60 + second) - Int64(offsetMinutes * 60)
        return seconds * 1000 + Int64(millisecond)
    }

    static func format(_ milliseconds: Int64) -> String {
        let seconds = milliseconds >= 0 ? milliseconds / 1000 : (milliseconds - 999) / 1000
        let millisecond = Int(milliseconds - seconds * 1000)
        let days = seconds >= 0 ? seconds / 86_400 : (seconds - 86_399) / 86_400
        let secondOfDay = Int(seconds - days * 86_400)
        let (year, month, day) = civilFromDays(Int(days))
        // `YYYY-MM-DDTHH:MM:SS.sssZ`: 24 bytes for years 0…9999, at most 30 for any Int64 instant, written digit by digit.
        return String(unsafeUninitializedCapacity: 32) { text in
            var count = 0
            func append(_ value: Int, _ width: Int, then separator: UInt8?) {
                var digits = 1
                var rest = value / 10
                while rest > 0 {
                    digits += 1
                    rest /= 10
                }
                let end = count + max(width, digits)
                var position = end
                var remaining = value
                while position > count {
                    position -= 1
                    text[position] = UInt8(ascii: "0") + UInt8(remaining % 10)
                    remaining /= 10
                }
                count = end
                if let separator {
                    text[count] = separator
                    count += 1
                }
            }
            if year < 0 {
                text[count] = UInt8(ascii: "-")
                count += 1
            }
            append(abs(year), 4, then: UInt8(ascii: "-"))
            append(month, 2, then: UInt8(ascii: "-"))
            append(day, 2, then: UInt8(ascii: "T"))
            append(secondOfDay / 3600, 2, then: UInt8(ascii: ":"))
            append(secondOfDay / 60 % 60, 2, then: UInt8(ascii: ":"))
            append(secondOfDay % 60, 2, then: millisecond != 0 ? UInt8(ascii: ".") : nil)
            if millisecond != 0 { append(millisecond, 3, then: nil) }
            text[count] = UInt8(ascii: "Z")
            return count + 1
        }
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

    /// Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant's algorithm).
    private static func daysFromCivil(year: Int, month: Int, day: Int) -> Int {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yearOfEra = y - era * 400
        let dayOfYear = (153 * (month + (month > 2 ? -3 : 9)) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }

    private static func civilFromDays(_ days: Int) -> (Int, Int, Int) {
        let z = days + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let dayOfEra = z - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let monthIndex = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * monthIndex + 2) / 5 + 1
        let month = monthIndex < 10 ? monthIndex + 3 : monthIndex - 9
        return (yearOfEra + era * 400 + (month <= 2 ? 1 : 0), month, day)
    }
}
