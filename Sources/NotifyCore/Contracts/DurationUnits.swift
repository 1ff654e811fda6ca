/// A `Duration` in the units settings, logs, metrics and librdkafka speak.
///
/// Each reading of `components` divides 128 bits, so every conversion reads it once.
extension Duration {
    /// Whole milliseconds, rounded toward zero.
    public var milliseconds: Int64 {
        let (seconds, attoseconds) = components
        return seconds * 1_000 + attoseconds / 1_000_000_000_000_000
    }

    /// Whole microseconds, rounded toward zero.
    public var microseconds: Int64 {
        let (seconds, attoseconds) = components
        return seconds * 1_000_000 + attoseconds / 1_000_000_000_000
    }

    /// Whole nanoseconds, rounded toward zero.
    public var nanoseconds: Int64 {
        let (seconds, attoseconds) = components
        return seconds * 1_000_000_000 + attoseconds / 1_000_000_000
    }

    /// Seconds, with their fraction.
    public var seconds: Double {
        let (seconds, attoseconds) = components
        return Double(seconds) + Double(attoseconds) / 1e18
    }

    /// Seconds to the millisecond, without a fraction when there is none: "3", "2.5".
    public var secondsText: String {
        let milliseconds = milliseconds
        return milliseconds % 1_000 == 0 ? "\(milliseconds / 1_000)" : "\(Double(milliseconds) / 1_000)"
    }
}
