import Kafka
import NotifyCore

/// An input record the pipeline could not use, with why: sent to
/// `notify.dlq` with its original key and value, the reason and its source in headers.
public struct DeadLetter: Sendable {
    public var reason: String
    public var sourceTopic: String
    public var sourcePartition: Int32
    public var sourceOffset: Int64
    var key: [UInt8]?
    var value: [UInt8]

    init(_ record: KafkaRecord, reason: String) {
        self.reason = reason
        sourceTopic = record.topic
        sourcePartition = record.partition
        sourceOffset = record.offset
        key = record.key
        value = record.value
    }

    /// The record for `notify.dlq`.
    var record: OutgoingRecord {
        OutgoingRecord(topic: Topic.dlq, key: key, value: value, headers: [
            KafkaHeader(name: DeadLetterHeader.reason, string: reason),
            KafkaHeader(name: DeadLetterHeader.sourceTopic, string: sourceTopic),
            KafkaHeader(name: DeadLetterHeader.sourcePartition, string: String(sourcePartition)),
            KafkaHeader(name: DeadLetterHeader.sourceOffset, string: String(sourceOffset)),
        ])
    }
}

/// The headers of a `notify.dlq` record.
public enum DeadLetterHeader {
    public static let reason = "notify-reason"
    public static let sourceTopic = "notify-source-topic"
    public static let sourcePartition = "notify-source-partition"
    public static let sourceOffset = "notify-source-offset"
}
