import Logging
import NotifyKafka

/// Reads a partition of a compacted topic from an offset up to its end as it
/// stands now: how a task gets its state and tables back, and how the identity table is loaded.
struct ChangelogRestorer: Sendable {
    let client: KafkaClientConfiguration
    let admin: KafkaAdmin
    let logger: Logger

    /// Every record of `topic[partition]` from `offset` to the current end, and the next offset to read.
    func read(topic: String, partition: Int32, from offset: Int64) async throws -> (
        records: [KafkaRecord], position: Int64
    ) {
        let topicPartition = TopicPartition(topic: topic, partition: partition)
        let (low, high) = try await admin.watermarks(topicPartition)
        let start = max(offset, low)
        guard start < high else { return ([], max(offset, high)) }
        let consumer = try KafkaConsumer(
            configuration: .init(client: client, groupId: "notify-restore", maxBatchSize: 5_000), logger: logger)
        var records: [KafkaRecord] = []
        do {
            try consumer.assign([topicPartition: .offset(start)])
            reading: for try await batch in consumer.batches {
                for record in batch {
                    records.append(record)
                    if record.offset >= high - 1 { break reading }
                }
            }
        } catch {
            await consumer.close()
            throw error
        }
        await consumer.close()
        return (records, high)
    }
}
