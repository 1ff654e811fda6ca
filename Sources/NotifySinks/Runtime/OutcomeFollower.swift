import Foundation
import Kafka
import Logging
import NotifyCore

/// Reads all of `notify.outcomes` into a ``DeliveryLedger``, from the beginning and then as it
/// grows, outside any consumer group (it never commits).
final class OutcomeFollower: Sendable {
    private let topic: String
    private let ledger: DeliveryLedger
    private let consumer: KafkaConsumer
    private let admin: KafkaAdmin
    private let partitionCount: Int32
    private let logger: Logger

    init(kafka: KafkaClientConfiguration, topic: String, ledger: DeliveryLedger, logger: Logger) async throws {
        self.topic = topic
        self.ledger = ledger
        self.logger = logger
        admin = try KafkaAdmin(configuration: kafka, logger: logger)
        guard let count = try await admin.metadata(of: topic)?.partitionCount, count > 0 else {
            throw SinkConfigurationError("topic \(topic) does not exist")
        }
        partitionCount = Int32(count)
        consumer = try KafkaConsumer(
            configuration: KafkaConsumerConfiguration(
                client: kafka, groupId: "notify-sink-\(ledger.kind)-ledger-\(UUID().uuidString)", autoOffsetReset: .earliest
            ),
            logger: logger
        )
        var partitions: [TopicPartition: KafkaOffset] = [:]
        for partition in 0..<partitionCount {
            partitions[TopicPartition(topic: topic, partition: partition)] = .beginning
        }
        try consumer.assign(partitions)
    }

    /// Follows the topic until cancelled.
    func run() async throws {
        for try await batch in consumer.batches {
            var positions: [Int32: Int64] = [:]
            for record in batch {
                positions[record.partition] = record.offset + 1
                do throws(InvalidRecord) {
                    if let entry = try NotificationOutcome.ledgerEntry(record: record.value, kind: ledger.kind) {
                        ledger.record(entry)
                    }
                } catch {
                    logger.debug("skipping an unreadable outcome", metadata: ["partition": "\(record.partition)", "offset": "\(record.offset)"])
                }
            }
            for (partition, next) in positions {
                ledger.advance(partition: partition, to: next)
            }
        }
    }

    /// Returns once every outcome written before the call has been read: a partition of
    /// `notify.commands` is only processed after that, so nothing already decided is redone.
    func catchUp() async throws {
        var target: [Int32: Int64] = [:]
        for partition in 0..<partitionCount {
            target[partition] = try await admin.watermarks(TopicPartition(topic: topic, partition: partition)).high
        }
        await ledger.waitUntilRead(target)
    }

    func close() async {
        await consumer.close()
    }
}
