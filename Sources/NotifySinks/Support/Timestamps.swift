import Foundation

/// RFC 3339 timestamps as the contracts carry them.
enum Timestamps {
    /// Parses `2026-11-22T03:00:00Z`, with or without fractional seconds.
    static func parse(_ text: String) -> Date? {
        if let date = try? Date.ISO8601FormatStyle(includingFractionalSeconds: true).parse(text) { return date }
        return try? Date.ISO8601FormatStyle().parse(text)
    }

    /// Formats `date` in UTC with milliseconds.
    static func format(_ date: Date) -> String {
        date.formatted(Date.ISO8601FormatStyle(includingFractionalSeconds: true))
    }
}
