import Logging
import NotifyCore
import NotifyKafka

/// An input record the pipeline could not use, with why: sent to
/// `notify.dlq` with its original key and value, the reason and its source in headers.
public struct DeadLetter: Sendable {
    public var reason: String
    public var sourceTopic: String
    public var sourcePartition: Int32
    public var sourceOffset: Int64
    var key: [UInt8]?
    var value: [UInt8]

    /// The dead letter of `record`, which is not usable because of `reason`.
    public init(_ record: KafkaRecord, reason: String) {
        self.reason = reason
        sourceTopic = record.topic
        sourcePartition = record.partition
        sourceOffset = record.offset
        key = record.key
        value = record.value
    }

    /// The record for `notify.dlq`, at most `limit` bytes: the reason, the source and the key always,
    /// and as much of the value as fits (a cut value has the header ``DeadLetterHeader/truncated``).
    public func record(fitting limit: Int, topic: String = Topic.dlq) -> OutgoingRecord {
        var headers = [
            KafkaHeader(name: DeadLetterHeader.reason, string: reason),
            KafkaHeader(name: DeadLetterHeader.sourceTopic, string: sourceTopic),
            KafkaHeader(name: DeadLetterHeader.sourcePartition, string: String(sourcePartition)),
            KafkaHeader(name: DeadLetterHeader.sourceOffset, string: String(sourceOffset)),
        ]
        let fixed =
            Self.recordOverhead + (key?.count ?? 0)
            + headers.reduce(0) { $0 + $1.name.utf8.count + ($1.value?.count ?? 0) + Self.headerOverhead }
        guard fixed + value.count > limit else {
            return OutgoingRecord(topic: topic, key: key, value: value, headers: headers)
        }
        let truncation = KafkaHeader(name: DeadLetterHeader.truncated, string: String(value.count))
        let room = max(
            0, limit - fixed - truncation.name.utf8.count - (truncation.value?.count ?? 0) - Self.headerOverhead)
        headers.append(truncation)
        return OutgoingRecord(topic: topic, key: key, value: Array(value.prefix(room)), headers: headers)
    }

    /// The `notify.dlq` record of `record`, which is not usable because of `reason`, within `limit` bytes
    /// (see ``record(fitting:topic:)``).
    public static func record(of record: KafkaRecord, reason: String, topic: String = Topic.dlq, fitting limit: Int)
        -> OutgoingRecord
    {
        DeadLetter(record, reason: reason).record(fitting: limit, topic: topic)
    }

    /// Bytes a record takes beyond its key, value and headers, with room to spare: the record batch
    /// header (61 bytes, one record per batch at worst) and the record's own varints and attributes.
    static let recordOverhead = 128
    /// A header's varints beyond its name and value.
    static let headerOverhead = 10
}

/// The headers of a `notify.dlq` record.
public enum DeadLetterHeader {
    public static let reason = "notify-reason"
    public static let sourceTopic = "notify-source-topic"
    public static let sourcePartition = "notify-source-partition"
    public static let sourceOffset = "notify-source-offset"
    /// Present when the value is cut to what the dead-letter topic takes: the original value's size in bytes.
    public static let truncated = "notify-truncated-from-bytes"
}

/// The largest record the dead-letter topic takes: its `max.message.bytes` as the cluster describes
/// it (else Kafka's default), and no more than the client's `message.max.bytes` when that is set.
/// Read in the background, so that a cluster slow to answer (the embedded broker cannot, and times
/// out) never holds a start-up back; a dead letter waits for it.
public struct DeadLetterLimit: Sendable {
    private let reading: Task<Int, Never>

    /// Kafka's default `max.message.bytes` of a topic (and `message.max.bytes` of a broker).
    public static let kafkaDefault = 1_048_588

    /// A limit known beforehand.
    public init(bytes: Int) {
        reading = Task { bytes }
    }

    /// Starts reading the limit of `topic` from the cluster of `client`.
    public init(of topic: String, client: KafkaClientConfiguration, logger: Logger) {
        reading = Task {
            var limit = Self.kafkaDefault
            do {
                let admin = try KafkaAdmin(configuration: client, logger: logger)
                if let value = try await admin.topicConfig(topic, "max.message.bytes", timeoutMilliseconds: 3_000),
                    let bytes = Int(value)
                {
                    limit = bytes
                }
            } catch {
                logger.info(
                    "Could not read max.message.bytes of \(topic) (\(error)); dead letters are kept within \(limit) bytes"
                )
            }
            if let clientLimit = client.properties["message.max.bytes"].flatMap(Int.init) {
                limit = min(limit, clientLimit)
            }
            return limit
        }
    }

    /// The limit, once read.
    public var bytes: Int {
        get async { await reading.value }
    }
}
