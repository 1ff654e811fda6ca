import Foundation
import Logging
import NotifyCore
import NotifyKafka
import Synchronization

/// What the ledger's restore read before the sink could start.
public struct LedgerRestoreReport: Sendable, CustomStringConvertible {
    /// Where on `notify.outcomes` it began, and why there.
    public var from: String
    /// Records read up to the end the topic had when the restore began.
    public var recordsRead: Int
    /// From the lookup of where to begin to the last of those records.
    public var duration: Duration

    public var description: String {
        "ledger restore read \(recordsRead) records of notify.outcomes in \(duration), from \(from)"
    }
}

/// Reads `notify.outcomes` into a ``DeliveryLedger``: first what a re-read command can have
/// (from a ``LedgerRestoreStart``), then as the topic grows, outside any consumer group (it never commits).
final class OutcomeFollower: Sendable {
    private struct Restore {
        /// The end of each partition when the restore began.
        let target: [Int32: Int64]
        let start: LedgerRestoreStart
        let began: ContinuousClock.Instant
        /// Partitions not yet read up to their target.
        var pending: Set<Int32>
        var recordsRead = 0
        var reported = false
    }

    private let topic: String
    private let ledger: DeliveryLedger
    private let consumer: KafkaConsumer
    private let admin: KafkaAdmin
    private let partitionCount: Int32
    private let logger: Logger
    private let restore: Mutex<Restore>
    private let restored = OneShot<LedgerRestoreReport>()

    /// Finds where the restore starts for `group` on `topics.commands` (reading the whole topic
    /// when `restoreMargin` is `nil`) and begins reading there.
    init(
        kafka: KafkaClientConfiguration, topics: SinkTopics, group: String, restoreMargin: Duration?,
        ledger: DeliveryLedger, logger: Logger
    ) async throws {
        let began = ContinuousClock.now
        topic = topics.outcomes
        self.ledger = ledger
        self.logger = logger
        admin = try KafkaAdmin(configuration: kafka, logger: logger)
        guard let count = try await admin.metadata(of: topic)?.partitionCount, count > 0 else {
            throw SinkConfigurationError("topic \(topic) does not exist")
        }
        partitionCount = Int32(count)
        let start = await LedgerRestoreStart.find(
            group: group, topics: topics, outcomePartitions: partitionCount, margin: restoreMargin, kafka: kafka,
            admin: admin,
            logger: logger)
        var target: [Int32: Int64] = [:]
        var pending: Set<Int32> = []
        var partitions: [TopicPartition: KafkaOffset] = [:]
        for partition in 0..<partitionCount {
            let outcomes = TopicPartition(topic: topic, partition: partition)
            let marks = try await admin.watermarks(outcomes)
            target[partition] = marks.high
            let first = start.offsets?[partition] ?? marks.low
            if marks.high > first { pending.insert(partition) }
            partitions[outcomes] = start.offsets?[partition].map(KafkaOffset.offset) ?? .beginning
            // What lies before the start counts as read: a partition with nothing after it is caught up.
            ledger.advance(partition: partition, to: first)
        }
        restore = Mutex(Restore(target: target, start: start, began: began, pending: pending))
        consumer = try KafkaConsumer(
            configuration: KafkaConsumerConfiguration(
                client: kafka, groupId: "notify-sink-\(ledger.kind)-ledger-\(UUID().uuidString)",
                autoOffsetReset: .earliest
            ),
            logger: logger
        )
        try consumer.assign(partitions)
    }

    /// Follows the topic until cancelled.
    func run() async throws {
        noteRestore(of: [])
        for try await batch in consumer.batches {
            var positions: [Int32: Int64] = [:]
            for record in batch {
                positions[record.partition] = record.offset + 1
                do throws(InvalidRecord) {
                    if let entry = try NotificationOutcome.ledgerEntry(record: record.value, kind: ledger.kind) {
                        ledger.record(entry)
                    }
                } catch {
                    logger.debug(
                        "skipping an unreadable outcome",
                        metadata: ["partition": "\(record.partition)", "offset": "\(record.offset)"])
                }
            }
            noteRestore(of: batch)
            for (partition, next) in positions {
                ledger.advance(partition: partition, to: next)
            }
        }
    }

    /// Counts `batch` into the restore, and reports the restore once it has read up to its target.
    private func noteRestore(of batch: [KafkaRecord]) {
        let report = restore.withLock { restore -> LedgerRestoreReport? in
            guard !restore.reported else { return nil }
            for record in batch where record.offset < restore.target[record.partition] ?? 0 {
                restore.recordsRead += 1
                if record.offset + 1 >= restore.target[record.partition] ?? 0 {
                    restore.pending.remove(record.partition)
                }
            }
            guard restore.pending.isEmpty else { return nil }
            restore.reported = true
            return LedgerRestoreReport(
                from: restore.start.description, recordsRead: restore.recordsRead,
                duration: ContinuousClock.now - restore.began)
        }
        guard let report else { return }
        restored.resolve(report)
        logger.info("\(report)")
    }

    /// What the restore read, once it has read up to the end the topic had when it began (while ``run()`` runs).
    func restoreReport() async -> LedgerRestoreReport {
        await restored.value()
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
