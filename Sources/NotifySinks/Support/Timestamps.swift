import Foundation
import NotifyCore

/// RFC 3339 timestamps as the contracts carry them, read and written by the core's ``EventTime``
/// (every command's `at` and `expiresAt` are read, and every outcome's `at` written, on the hot
/// path, where Foundation's ISO 8601 format styles cost several microseconds each).
enum Timestamps {
    /// Parses `2026-11-22T03:00:00Z`, with or without fractional seconds (kept to milliseconds).
    static func parse(_ text: String) -> Date? {
        EventTime(rfc3339: text).map { Date(timeIntervalSince1970: Double($0.milliseconds) / 1000) }
    }

    /// Formats `date` in UTC, to the millisecond.
    static func format(_ date: Date) -> String {
        EventTime(date).rfc3339
    }
}
