import CRdkafka
import Logging

/// Reads single records by offset, outside any consumer group (it never commits): the record at
/// an offset, and where a partition's record timestamps reach a given time.
///
/// A broker answers "first offset at or after this time" from its time index (`offsetsForTimes`),
/// but the embedded broker (librdkafka's mock cluster) keeps none and answers -1; the probe reads
/// the records themselves instead, about log2(records) of them per partition, so one code path
/// serves both. Reads of different partitions may run at once.
public final class KafkaRecordProbe: Sendable {
    private let handle: NativeHandle
    private let context: ClientContext
    /// A read of one partition waits for a fetch, which librdkafka 2.0.2 often starts only at its
    /// broker thread's next wake-up (up to a second later, measured on the embedded broker): reads of
    /// different partitions go on lanes of their own, so their waits overlap.
    private let lanes = (0..<16).map { BlockingCallQueue(label: "notify.kafka.probe.\($0)") }

    public init(configuration: KafkaClientConfiguration, logger: Logger) throws {
        context = ClientContext(logger: logger)
        // An offset that retention deleted under the probe is an error, never a silent jump; and
        // each probe wants one record, not the fetcher's usual read-ahead.
        let native = try NativeConfiguration(
            configuration.merged(
                with: [
                    "auto.offset.reset": "error", "queued.min.messages": "1", "fetch.wait.max.ms": "10",
                    "fetch.error.backoff.ms": "10",
                ], for: .consumer))
        try native.install(context)
        handle = NativeHandle(pointer: try makeNativeClient(type: RD_KAFKA_CONSUMER, configuration: native))
    }

    deinit {
        rd_kafka_destroy(handle.pointer)
    }

    /// The first record of `partition` at or after `offset`, or `nil` when none arrives within
    /// `timeoutMilliseconds` (there is none yet, or the broker is slow to answer).
    public func record(at offset: Int64, in partition: TopicPartition, timeoutMilliseconds: Int32 = 10_000) async throws
        -> KafkaRecord?
    {
        let handle = handle
        return try await lanes[Int(partition.partition) % lanes.count].run {
            guard let topic = rd_kafka_topic_new(handle.pointer, partition.topic, nil) else {
                throw KafkaError(rd_kafka_last_error(), context: "topic \(partition.topic)")
            }
            defer { rd_kafka_topic_destroy(topic) }
            guard rd_kafka_consume_start(topic, partition.partition, offset) == 0 else {
                throw KafkaError(rd_kafka_last_error(), context: "read \(partition) at \(offset)")
            }
            defer { rd_kafka_consume_stop(topic, partition.partition) }
            guard let message = rd_kafka_consume(topic, partition.partition, timeoutMilliseconds) else { return nil }
            defer { rd_kafka_message_destroy(message) }
            let error = message.pointee.err
            if error != RD_KAFKA_RESP_ERR_NO_ERROR {
                throw KafkaError(error, context: "read \(partition) at \(offset)")
            }
            return KafkaRecord(copying: message, topic: partition.topic)
        }
    }

    /// The first offset in `offsets` whose record's timestamp is at or after `milliseconds`
    /// (`offsets.upperBound` when there is none), found by bisection: exact where the timestamps do
    /// not decrease along the partition, as when each record is stamped at its sending. A record
    /// stamped out of order by `d` can move the answer past records up to `d` newer than
    /// `milliseconds`: ask for an earlier time by at least the disorder to allow. Records without a
    /// timestamp, and probes that read nothing, count as not before the time, which can only move
    /// the answer earlier.
    public func firstOffset(
        timestampAtOrAfter milliseconds: Int64, in partition: TopicPartition, within offsets: Range<Int64>
    ) async throws -> Int64 {
        var low = offsets.lowerBound
        var high = offsets.upperBound
        while low < high {
            let middle = low + (high - low) / 2
            if let record = try await record(at: middle, in: partition), record.offset < high,
                let timestamp = record.timestampMilliseconds, timestamp < milliseconds
            {
                low = record.offset + 1
            } else {
                high = middle
            }
        }
        return low
    }
}
