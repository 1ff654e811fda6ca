import NotifyCore
import NotifyKafka

/// A record as the consumer read it, with its event decoded ahead of its task: the stage's consumer
/// loop parses a batch's JSON (``decodingAhead(_:logic:limits:)``) off the stage's actor, which every
/// batch, release and mark of the stage goes through and which folds on one core. (The loop hands
/// the actor one batch at a time, so decoding overlaps the actor's release passes and ticks, not the
/// folding of the batch before.) In the throughput benchmark, stage 2's actor worked 17 to 37% less
/// for it (notify_stage_busy_seconds_total).
struct ConsumedRecord: Sendable {
    var record: KafkaRecord
    /// The record's event, or why its value is not one, when decoded ahead; `nil` for a record its task
    /// decodes itself: a forwarded one (its topic is in a header, checked by the task), a mark record
    /// (no value) and one over the size limit (never parsed). The task decides what becomes of the
    /// record either way: it may skip it as applied already, forward it, or dead-letter it.
    var event: Result<InputEvent, EventDecodingError>?

    init(_ record: KafkaRecord, event: Result<InputEvent, EventDecodingError>? = nil) {
        self.record = record
        self.event = event
    }

    /// `records` with the events of those a task would decode under their own topic decoded.
    static func decodingAhead<Logic: StageLogic>(_ records: [KafkaRecord], logic: Logic, limits: RecordLimits)
        -> [ConsumedRecord]
    {
        records.map { record in
            guard record.topic != logic.repartitionTopic, !record.value.isEmpty,
                record.value.count <= limits.maxRecordBytes
            else { return ConsumedRecord(record) }
            return ConsumedRecord(record, event: decoding(record.value, topic: record.topic))
        }
    }

    /// The event `value` holds as a record of `topic`, or why it holds none.
    static func decoding(_ value: [UInt8], topic: String) -> Result<InputEvent, EventDecodingError> {
        Result { () throws(EventDecodingError) in try InputEvent.decode(topic: topic, value: value) }
    }
}
