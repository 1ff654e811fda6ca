import NotifyCore
import NotifyKafka
import Synchronization

/// A device as the runtime orders work: commands for one device run one after the other.
struct DeviceKey: Hashable, Sendable {
    var userId: String
    var deviceId: String
}

/// Whether this instance still owns a partition; a revoked lease makes its commands' workers
/// stop before their next attempt (a running attempt is finished and reported).
final class PartitionLease: Sendable {
    private let revoked = Atomic<Bool>(false)

    var isCurrent: Bool { !revoked.load(ordering: .acquiring) }

    func revoke() {
        revoked.store(true, ordering: .releasing)
    }
}

/// A record of `notify.commands` as the reader classified it.
enum ReadRecord: Sendable {
    case command(KafkaRecord, NotificationCommand)
    case notForThisKind(KafkaRecord)
    case invalid(KafkaRecord, reason: String)

    var record: KafkaRecord {
        switch self {
        case .command(let record, _), .notForThisKind(let record), .invalid(let record, _): record
        }
    }
}

/// A command read from `notify.commands` waiting for (or in) its delivery.
struct QueuedCommand: Sendable {
    var record: KafkaRecord
    var command: NotificationCommand
    var lease: PartitionLease
}

/// The runtime's bookkeeping: one queue per device (per-device order, no head-of-line blocking
/// across devices), per-partition offsets that may be committed, and how much is buffered.
actor DeliveryScheduler {
    private struct PartitionEntry {
        var lease = PartitionLease()
        var offsets = OffsetTracker()
        var committed: Int64?
        var activeWorkers = 0
        var idle: [CheckedContinuation<Void, Never>] = []
    }

    private struct DeviceQueue {
        var partition: Int32
        var items: [QueuedCommand] = []
        var head = 0
    }

    private let topic: String
    private let maxBuffered: Int
    private let workerStarts: [AsyncStream<DeviceKey>.Continuation]
    private var nextWorkerStart = 0
    private var partitions: [Int32: PartitionEntry] = [:]
    private var devices: [DeviceKey: DeviceQueue] = [:]
    private var buffered = 0
    private var roomWaiters: [CheckedContinuation<Void, Never>] = []

    /// - Parameter workerStarts: one of them (in turn) receives a device whenever its queue needs
    ///   a worker; the runtime runs ``next(for:)`` / ``finish(_:recorded:thenNextFor:)`` for it
    ///   until they return `nil`.
    init(topic: String, maxBuffered: Int, workerStarts: [AsyncStream<DeviceKey>.Continuation]) {
        self.topic = topic
        self.maxBuffered = max(1, maxBuffered)
        self.workerStarts = workerStarts
    }

    /// Partitions this instance now owns.
    func assign(_ assigned: [Int32]) {
        for partition in assigned where partitions[partition] == nil {
            partitions[partition] = PartitionEntry()
        }
    }

    /// Takes in a batch as it was read: commands go to their device's queue, records the kind
    /// does not handle are finished at once, and undecodable ones are returned (with their
    /// partition's lease) to be dead-lettered and then passed to ``finishDeadLettered(_:)``.
    /// Records of partitions this instance does not own (any more) are left to the next owner.
    func admit(_ batch: [ReadRecord]) -> [(record: KafkaRecord, reason: String, lease: PartitionLease)] {
        var invalid: [(record: KafkaRecord, reason: String, lease: PartitionLease)] = []
        for read in batch {
            let record = read.record
            guard let lease = partitions[record.partition]?.lease else { continue }
            partitions[record.partition]?.offsets.read(record.offset)
            switch read {
            case .command(_, let command):
                enqueue(QueuedCommand(record: record, command: command, lease: lease))
            case .notForThisKind:
                partitions[record.partition]?.offsets.finish(record.offset)
            case .invalid(_, let reason):
                invalid.append((record, reason, lease))
            }
        }
        return invalid
    }

    /// A dead-lettered record is done with.
    func finishDeadLettered(_ record: KafkaRecord) {
        partitions[record.partition]?.offsets.finish(record.offset)
    }

    /// Queues a command behind the earlier ones for the same device.
    private func enqueue(_ item: QueuedCommand) {
        buffered += 1
        let key = DeviceKey(userId: item.command.recipient.userId, deviceId: item.command.recipient.deviceId)
        if devices[key] != nil {
            devices[key]?.items.append(item)
            return
        }
        devices[key] = DeviceQueue(partition: item.record.partition, items: [item])
        partitions[item.record.partition]?.activeWorkers += 1
        workerStarts[nextWorkerStart].yield(key)
        nextWorkerStart = (nextWorkerStart + 1) % workerStarts.count
    }

    /// The next command for `key`'s worker, or `nil` when its queue is empty (the worker ends).
    func next(for key: DeviceKey) -> QueuedCommand? {
        guard var queue = devices[key] else { return nil }
        if queue.head < queue.items.count, queue.items[queue.head].lease.isCurrent {
            let item = queue.items[queue.head]
            queue.head += 1
            if queue.head > 64, queue.head * 2 > queue.items.count {
                queue.items.removeFirst(queue.head)
                queue.head = 0
            }
            devices[key] = queue
            return item
        }
        devices[key] = nil
        release(queue.items.count - queue.head)
        if var entry = partitions[queue.partition] {
            entry.activeWorkers -= 1
            if entry.activeWorkers == 0 {
                for waiter in entry.idle { waiter.resume() }
                entry.idle = []
            }
            partitions[queue.partition] = entry
        }
        return nil
    }

    /// The command's outcome is acknowledged (or it needed none): its offset may be committed.
    /// `recorded == false` means the work was abandoned because the partition went away.
    /// Returns the device's next command, as ``next(for:)`` does (one hop instead of two).
    func finish(_ item: QueuedCommand, recorded: Bool, thenNextFor key: DeviceKey) -> QueuedCommand? {
        release(1)
        if recorded, partitions[item.record.partition]?.lease === item.lease {
            partitions[item.record.partition]?.offsets.finish(item.record.offset)
        }
        return next(for: key)
    }

    /// Returns once fewer than `maxBuffered` commands are waiting or in delivery.
    func waitForRoom() async {
        guard buffered >= maxBuffered else { return }
        await withCheckedContinuation { roomWaiters.append($0) }
    }

    /// Offsets that advanced since they were last stored for commit.
    func storable() -> [TopicPartition: Int64] {
        var result: [TopicPartition: Int64] = [:]
        for (partition, entry) in partitions {
            if let offset = entry.offsets.committable, offset != entry.committed {
                result[TopicPartition(topic: topic, partition: partition)] = offset
            }
        }
        return result
    }

    func stored(_ offsets: [TopicPartition: Int64]) {
        for (partition, offset) in offsets where partitions[partition.partition] != nil {
            partitions[partition.partition]?.committed = offset
        }
    }

    /// Gives partitions up: queued commands are dropped (the next owner reads them again),
    /// attempts under way are finished and reported. Returns the offsets to store for them.
    func revoke(_ revoked: [Int32]) async -> [TopicPartition: Int64] {
        for partition in revoked {
            partitions[partition]?.lease.revoke()
        }
        for partition in revoked {
            guard let entry = partitions[partition], entry.activeWorkers > 0 else { continue }
            await withCheckedContinuation { partitions[partition]?.idle.append($0) }
        }
        var offsets: [TopicPartition: Int64] = [:]
        for partition in revoked {
            if let entry = partitions.removeValue(forKey: partition), let offset = entry.offsets.committable,
                offset != entry.committed
            {
                offsets[TopicPartition(topic: topic, partition: partition)] = offset
            }
        }
        return offsets
    }

    /// Every partition this instance holds.
    var ownedPartitions: [Int32] { Array(partitions.keys) }

    private func release(_ count: Int) {
        guard count > 0 else { return }
        buffered -= count
        if buffered < maxBuffered {
            let waiters = roomWaiters
            roomWaiters = []
            for waiter in waiters { waiter.resume() }
        }
    }
}
