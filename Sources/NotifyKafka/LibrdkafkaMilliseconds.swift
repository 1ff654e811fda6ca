extension Duration {
    /// Whole milliseconds, rounded toward zero: the unit of librdkafka's `*.ms` properties and
    /// timeouts. (NotifyCore's `milliseconds` is the same reading; this module, the C binding, stands
    /// on its own and does not import the core.)
    var librdkafkaMilliseconds: Int64 {
        let (seconds, attoseconds) = components
        return seconds * 1_000 + attoseconds / 1_000_000_000_000_000
    }
}
