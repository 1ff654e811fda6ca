import Foundation
import Logging
import NotifyCore
import NotifyKafka
import NotifyRecords
import ServiceLifecycle
import Synchronization

/// The topics a sink reads and writes.
public struct SinkTopics: Sendable, Hashable {
    public var commands: String
    public var outcomes: String
    public var deadLetters: String

    public init(commands: String = Topic.commands, outcomes: String = Topic.outcomes, deadLetters: String = Topic.dlq) {
        self.commands = commands
        self.outcomes = outcomes
        self.deadLetters = deadLetters
    }
}

/// Hooks for what a sink does, for readiness, metrics and the console. Each is called after the
/// fact and must return quickly.
public struct SinkObserver: Sendable {
    /// An assignment's outcomes are caught up (after every assignment, also an empty one): the sink is ready.
    public var onReady: @Sendable () -> Void
    /// An outcome was acknowledged by the broker.
    public var onOutcome: @Sendable (NotificationOutcome) -> Void
    /// An attempt failed for a passing reason and will be retried.
    public var onRetry: @Sendable (_ reason: String) -> Void
    /// A command whose earlier attempt was recorded but never reported is being sent again, as a
    /// replacement of the copy the device may already show.
    public var onReplacement: @Sendable (_ commandId: String) -> Void
    /// A check of the Kafka cluster finished (``ClusterWatch``): it answered, or not in time.
    public var onClusterCheck: @Sendable (_ reachable: Bool) -> Void
    /// The sink gave partitions of `notify.commands` up in a rebalance and holds `remaining` now.
    public var onPartitionsRevoked: @Sendable (_ remaining: Int) -> Void
    /// A record of `source` (a command the sink gave up on, or no command at all) was written to the
    /// dead-letter topic and acknowledged.
    public var onDeadLetter: @Sendable (_ source: String) -> Void

    public init(
        onReady: @escaping @Sendable () -> Void = {},
        onOutcome: @escaping @Sendable (NotificationOutcome) -> Void = { _ in },
        onRetry: @escaping @Sendable (String) -> Void = { _ in },
        onReplacement: @escaping @Sendable (String) -> Void = { _ in },
        onClusterCheck: @escaping @Sendable (Bool) -> Void = { _ in },
        onPartitionsRevoked: @escaping @Sendable (Int) -> Void = { _ in },
        onDeadLetter: @escaping @Sendable (String) -> Void = { _ in }
    ) {
        self.onDeadLetter = onDeadLetter
        self.onReady = onReady
        self.onOutcome = onOutcome
        self.onRetry = onRetry
        self.onReplacement = onReplacement
        self.onClusterCheck = onClusterCheck
        self.onPartitionsRevoked = onPartitionsRevoked
    }
}

/// How a ``SinkRuntime`` runs.
public struct SinkRuntimeConfiguration: Sendable {
    public var kafka: KafkaClientConfiguration
    /// The consumer group; `notify-sink-<kind>` when `nil`.
    public var groupId: String?
    public var topics: SinkTopics
    public var retry: RetryPolicy
    /// Delivery attempts under way at once, over all devices.
    public var maxInFlight: Int
    /// Commands read but not finished before reading pauses.
    public var maxBuffered: Int
    /// How often finished offsets are stored for commit (librdkafka commits stored offsets in
    /// the background, before partitions are revoked, and on close).
    public var storeInterval: Duration
    /// How often the Kafka cluster is asked for metadata, for the probes (``SinkObserver/onClusterCheck``).
    public var clusterCheckInterval: Duration
    /// Who hears about readiness, outcomes and retries.
    public var observer: SinkObserver
    /// How much earlier than the oldest command its group can read again the ledger's restore
    /// begins on `notify.outcomes` (``SinkRuntime``): it allows for clocks that disagree, events
    /// stamped ahead of their append and outcomes appended out of order. `nil`: the whole topic.
    public var ledgerRestoreMargin: Duration?

    public init(
        kafka: KafkaClientConfiguration, groupId: String? = nil, topics: SinkTopics = SinkTopics(),
        retry: RetryPolicy = RetryPolicy(), maxInFlight: Int = 512, maxBuffered: Int = 20_000,
        storeInterval: Duration = .milliseconds(100), clusterCheckInterval: Duration = .seconds(2),
        ledgerRestoreMargin: Duration? = .seconds(3600), observer: SinkObserver = SinkObserver()
    ) {
        self.observer = observer
        self.ledgerRestoreMargin = ledgerRestoreMargin
        self.clusterCheckInterval = clusterCheckInterval
        self.kafka = kafka
        self.groupId = groupId
        self.topics = topics
        self.retry = retry
        self.maxInFlight = maxInFlight
        self.maxBuffered = maxBuffered
        self.storeInterval = storeInterval
    }

    /// The consumer group of a sink of `kind`.
    func group(ofKind kind: String) -> String {
        groupId ?? "notify-sink-\(kind)"
    }
}

/// Runs one ``NotificationSink`` as a member of a consumer group on `notify.commands`.
///
/// For every command the kind accepts:
/// - commands of one device are delivered in order, one at a time; a command in backoff holds
///   back only its own device;
/// - a command id that already has an outcome from this kind (read back from `notify.outcomes`,
///   which is caught up before a newly assigned partition is processed) is not delivered again;
///   the restore at start reads `notify.outcomes` from ``SinkRuntimeConfiguration/ledgerRestoreMargin``
///   before the oldest command the group can read again, not the whole topic (`LedgerRestoreStart`);
/// - before a command's first attempt, an `attempting` record is written to `notify.outcomes` and
///   acknowledged; a command that has one but no outcome (its sink died in between) is sent
///   again as a replacement (``Delivery/replacesEarlierAttempt``, ``SinkObserver/onReplacement``);
/// - a command past `expiresAt` is reported `expired`; one whose token was reported invalid
///   after its event is reported `token-invalid` without being sent;
/// - passing failures are retried with ``RetryPolicy``; permanent or exhausted ones are reported
///   `failed` and dead-lettered to `notify.dlq` with the pipeline's ``DeadLetterHeader``s
///   (`notify-reason`, `notify-source-topic`, `-partition`, `-offset`); undecodable commands
///   are dead-lettered too;
/// - every outcome goes to `notify.outcomes` (key: user id), and an offset is committed only once
///   the outcomes of it and of everything before it in its partition are acknowledged.
///
/// ``run()`` returns after ``stop()`` (or a graceful shutdown of its service group): it stops
/// reading, finishes the attempts under way, reports them, commits and leaves the group. Commands
/// not finished are read again by the next owner, and the ledger keeps them from going out twice.
public final class SinkRuntime: Service, Sendable {
    private let sink: any NotificationSink
    private let configuration: SinkRuntimeConfiguration
    private let logger: Logger
    private let stopRequested = OneShot<Void>()

    public init(sink: any NotificationSink, configuration: SinkRuntimeConfiguration, logger: Logger) {
        self.sink = sink
        self.configuration = configuration
        self.logger = logger
    }

    /// Asks ``run()`` to finish its work and return.
    public func stop() {
        stopRequested.resolve(())
    }

    /// Runs until ``stop()``, a graceful shutdown of the service group, or cancellation (which
    /// also interrupts attempts under way, like a crash would).
    public func run() async throws {
        try await withTaskCancellationHandler {
            try await withGracefulShutdownHandler {
                try await runUntilStopped()
            } onGracefulShutdown: {
                self.stop()
            }
        } onCancel: {
            self.stop()
        }
    }

    private func runUntilStopped() async throws {
        let topics = configuration.topics
        let ledger = DeliveryLedger(kind: sink.kind)
        // A delivery permit is held until its outcome is acknowledged, so the outcome's wait in
        // the producer's batch (`linger.ms`) is on every delivery's path: keep it short.
        let producer = try KafkaProducer(
            configuration: configuration.kafka, settings: KafkaProducerSettings(lingerMilliseconds: 3), logger: logger)
        let follower = try await OutcomeFollower(
            kafka: configuration.kafka, topics: topics, group: configuration.group(ofKind: sink.kind),
            restoreMargin: configuration.ledgerRestoreMargin, ledger: ledger, logger: logger)
        // Device workers live in several task groups: a group's finishing child is unlinked by a
        // walk over its children, so one group of ten thousand busy devices costs O(n) per worker.
        let workerShards = (0..<16).map { _ in AsyncStream.makeStream(of: DeviceKey.self) }
        let scheduler = DeliveryScheduler(
            topic: topics.commands, maxBuffered: configuration.maxBuffered,
            workerStarts: workerShards.map(\.continuation)
        )
        let deadLetterLimit = DeadLetterLimit(of: topics.deadLetters, client: configuration.kafka, logger: logger)
        let delivery = DeliveryProcess(
            sink: sink, ledger: ledger, producer: producer, topics: topics, deadLetterLimit: deadLetterLimit,
            retry: configuration.retry,
            permits: AsyncPermits(limit: configuration.maxInFlight), observer: configuration.observer,
            tracing: .bootstrapped,
            logger: logger
        )
        let consumerCell = ConsumerCell()
        let logger = self.logger
        let observer = configuration.observer
        let hooks = RebalanceHooks(
            assigned: { assigned in
                // Outcomes written by the previous owner must be known before its commands are redone.
                do {
                    try await follower.catchUp()
                } catch {
                    logger.error("could not catch up with \(topics.outcomes): \(error)")
                }
                await scheduler.assign(assigned.map(\.partition))
                observer.onReady()
            },
            revoked: { revoked in
                let offsets = await scheduler.revoke(revoked.map(\.partition))
                observer.onPartitionsRevoked(await scheduler.ownedPartitions.count)
                guard !offsets.isEmpty, let consumer = consumerCell.consumer else { return }
                do {
                    // The consumer commits stored offsets before it gives the partitions up.
                    try consumer.store(offsets)
                } catch {
                    logger.warning("storing offsets on revocation failed: \(error)")
                }
            }
        )
        let consumer = try KafkaConsumer(
            configuration: KafkaConsumerConfiguration(
                client: configuration.kafka, groupId: configuration.group(ofKind: sink.kind), autoOffsetReset: .earliest
            ),
            hooks: hooks,
            logger: logger
        )
        consumerCell.consumer = consumer
        try consumer.subscribe([topics.commands])

        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask {
                do {
                    try await follower.run()
                } catch {
                    // Without the ledger nothing may be delivered: stop, and report why.
                    logger.error("reading \(topics.outcomes) failed: \(error)")
                    self.stop()
                    throw error
                }
            }
            for shard in workerShards {
                group.addTask {
                    await withDiscardingTaskGroup { workers in
                        for await device in shard.stream {
                            workers.addTask { await delivery.work(device, scheduler: scheduler) }
                        }
                    }
                }
            }
            group.addTask { try await self.storePeriodically(consumer: consumer, scheduler: scheduler) }
            group.addTask {
                let watch = ClusterWatch(
                    client: self.configuration.kafka, topic: topics.commands,
                    interval: self.configuration.clusterCheckInterval)
                try await watch.run(logger: logger, report: observer.onClusterCheck)
            }
            let closed = OneShot<Void>()
            group.addTask {
                // Closing leaves the group: the revoked hook lets attempts under way finish and
                // stores their offsets, which are committed; then `batches` ends.
                await self.stopRequested.value()
                await consumer.close()
                closed.resolve(())
            }
            var failure: (any Error)?
            do {
                try await read(consumer: consumer, scheduler: scheduler, delivery: delivery)
            } catch {
                failure = error
                stop()
            }
            await closed.value()
            await follower.close()
            for shard in workerShards { shard.continuation.finish() }
            group.cancelAll()
            if let failure { throw failure }
        }
        await producer.close()
        await sink.shutdown()
    }

    /// Restores the ledger of a sink of `kind` as ``run()`` does at start, without joining the
    /// group or delivering anything, and reports what it read (for `notify-bench ledger-restore`).
    public static func restoreLedger(
        kind: String, configuration: SinkRuntimeConfiguration, logger: Logger
    ) async throws -> LedgerRestoreReport {
        let follower = try await OutcomeFollower(
            kafka: configuration.kafka, topics: configuration.topics, group: configuration.group(ofKind: kind),
            restoreMargin: configuration.ledgerRestoreMargin, ledger: DeliveryLedger(kind: kind), logger: logger)
        return try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { try await follower.run() }
            let report = await follower.restoreReport()
            await follower.close()
            try await group.waitForAll()
            return report
        }
    }

    private func read(consumer: KafkaConsumer, scheduler: DeliveryScheduler, delivery: DeliveryProcess) async throws {
        for try await batch in consumer.batches {
            let classified = batch.map { record -> ReadRecord in
                do throws(InvalidRecord) {
                    let command = try NotificationCommand(record: record.value)
                    return sink.accepts(command) ? .command(record, command) : .notForThisKind(record)
                } catch {
                    return .invalid(record, reason: "invalid command: \(error)")
                }
            }
            for (record, reason, lease) in await scheduler.admit(classified) {
                if await delivery.deadLetter(record, reason: reason, lease: lease) {
                    await scheduler.finishDeadLettered(record)
                }
            }
            await scheduler.waitForRoom()
        }
    }

    private func storePeriodically(consumer: KafkaConsumer, scheduler: DeliveryScheduler) async throws {
        while true {
            try await Task.sleep(for: configuration.storeInterval)
            let offsets = await scheduler.storable()
            guard !offsets.isEmpty else { continue }
            do {
                try consumer.store(offsets)
                await scheduler.stored(offsets)
            } catch {
                logger.debug("storing offsets failed (partition moving?): \(error)")
            }
        }
    }
}

/// The consumer, for its own rebalance hooks (which exist before it does).
private final class ConsumerCell: Sendable {
    private let cell = Mutex<KafkaConsumer?>(nil)

    var consumer: KafkaConsumer? {
        get { cell.withLock { $0 } }
        set { cell.withLock { $0 = newValue } }
    }
}
