import Foundation
import Logging
import NotifyCore
import NotifyKafka

/// Where the ledger's restore starts reading `notify.outcomes`, so that it does not grow with the
/// topic's history.
///
/// A command reaches a sink a second time only when its group reads it again after a crash or a
/// rebalance: in each partition of `notify.commands`, from the group's committed offset on (from
/// the oldest record left, where retention removed the committed one). Every outcome of such a
/// command was written after the command was first read, so after the record at the committed
/// offset was appended. That record's timestamp (the time of its event: at or before its append in
/// order, days before in a backfill, which only moves the bound earlier) less a margin, lowest over
/// the partitions, is the bound; each partition of `notify.outcomes` is read from its first record
/// stamped at or after it (``KafkaRecordProbe/firstOffset(timestampAtOrAfter:in:within:)``). The
/// margin covers what runs against that order: clocks of event sources, pipeline, sinks and
/// broker that disagree, events stamped ahead of their append, and outcomes appended out of
/// timestamp order (a producer's retries).
///
/// The whole topic is read instead (from the beginning; the ledger's expiry keeps the 28 days and
/// an hour that can matter) when there is no margin, when a partition of `notify.commands` holds
/// records the group has no committed offset for, or when a lookup fails.
struct LedgerRestoreStart: Sendable {
    /// Next offset to read in each partition of `notify.outcomes`; `nil`: the beginning of each.
    let offsets: [Int32: Int64]?
    /// Where from, and why there, for the log.
    let description: String

    /// Reads the whole topic, because of `reason`.
    static func wholeTopic(_ reason: String) -> LedgerRestoreStart {
        LedgerRestoreStart(offsets: nil, description: "the beginning (\(reason))")
    }

    /// Looks the start up for the consumer group `group` on `topics.commands`.
    static func find(
        group: String, topics: SinkTopics, outcomePartitions: Int32, margin: Duration?,
        kafka: KafkaClientConfiguration, admin: KafkaAdmin, logger: Logger
    ) async -> LedgerRestoreStart {
        guard let margin else { return wholeTopic("the restore is not bounded") }
        do {
            let probe = try KafkaRecordProbe(configuration: kafka, logger: logger)
            let (time, origin) = try await oldestReread(
                group: group, commands: topics.commands, probe: probe, kafka: kafka, admin: admin, logger: logger)
            let bound = time.addingTimeInterval(-margin.seconds)
            let milliseconds = Int64((bound.timeIntervalSince1970 * 1000).rounded(.down))
            let offsets = try await withThrowingTaskGroup(of: (Int32, Int64).self) { group in
                for partition in 0..<outcomePartitions {
                    group.addTask {
                        let outcomes = TopicPartition(topic: topics.outcomes, partition: partition)
                        let marks = try await admin.watermarks(outcomes)
                        return (
                            partition,
                            try await probe.firstOffset(
                                timestampAtOrAfter: milliseconds, in: outcomes,
                                within: marks.low..<max(marks.low, marks.high))
                        )
                    }
                }
                return try await group.reduce(into: [Int32: Int64]()) { $0[$1.0] = $1.1 }
            }
            return LedgerRestoreStart(
                offsets: offsets,
                description:
                    "outcomes stamped from \(Timestamps.format(bound)) on (\(origin), less the \(Int(margin.seconds)) s margin)"
            )
        } catch let unbounded as Unbounded {
            return wholeTopic(unbounded.reason)
        } catch {
            return wholeTopic("looking up the bound failed: \(error)")
        }
    }

    /// Why there is no bound.
    private struct Unbounded: Error {
        let reason: String
    }

    /// The oldest timestamp of the records the group reads first again (one a partition), or now
    /// when it has none to read again, and where that comes from.
    private static func oldestReread(
        group: String, commands: String, probe: KafkaRecordProbe, kafka: KafkaClientConfiguration, admin: KafkaAdmin,
        logger: Logger
    ) async throws -> (time: Date, origin: String) {
        guard let count = try await admin.metadata(of: commands)?.partitionCount else {
            throw Unbounded(reason: "\(commands) does not exist")
        }
        let partitions = (0..<Int32(count)).map { TopicPartition(topic: commands, partition: $0) }
        let committed = try await committedOffsets(group: group, partitions: partitions, kafka: kafka, logger: logger)
        // A command appended from now on is newer than anything the lookups below can find.
        var oldest = (time: Date(), origin: "\(group) has nothing on \(commands) to read again")
        for partition in partitions {
            let marks = try await admin.watermarks(partition)
            let next: Int64
            if let offset = committed[partition] ?? nil {
                next = max(offset, marks.low)
            } else if marks.low < marks.high {
                throw Unbounded(reason: "\(partition) holds records and \(group) has no committed offset there")
            } else {
                continue
            }
            guard next < marks.high else { continue }
            guard let record = try await probe.record(at: next, in: partition) else {
                throw Unbounded(reason: "the record at \(partition)@\(next) could not be read")
            }
            guard let stamp = record.timestampMilliseconds else {
                throw Unbounded(reason: "the record at \(partition)@\(record.offset) has no timestamp")
            }
            let time = Date(timeIntervalSince1970: TimeInterval(stamp) / 1000)
            if time < oldest.time {
                oldest = (
                    time, "\(group) reads \(partition) again from \(record.offset), stamped \(Timestamps.format(time))"
                )
            }
        }
        return oldest
    }

    /// The group's committed offsets, asked by a consumer that never joins it (it never subscribes).
    private static func committedOffsets(
        group: String, partitions: [TopicPartition], kafka: KafkaClientConfiguration, logger: Logger
    ) async throws -> [TopicPartition: Int64?] {
        let consumer = try KafkaConsumer(
            configuration: KafkaConsumerConfiguration(client: kafka, groupId: group), logger: logger)
        do {
            let committed = try await consumer.committed(partitions)
            await consumer.close()
            return committed
        } catch {
            await consumer.close()
            throw error
        }
    }
}
