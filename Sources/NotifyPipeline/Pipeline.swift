import Logging
import NotifyCore
import NotifyKafka
import NotifyRecords
import Synchronization

/// Settings of a pipeline instance.
public struct PipelineSettings: Sendable {
    public var client: KafkaClientConfiguration
    /// The consumer group; each stage joins `<group>.<stage>`.
    public var groupId: String
    public var stages: Set<StageName>
    public var core: CoreConfiguration
    /// Input records larger than this go to the dead-letter topic.
    public var maxRecordBytes: Int
    /// How often quiet tasks let wall-clock time advance their event time.
    public var tickInterval: Duration
    /// How long each task gathers changes before it writes the changelog of the keys it changed
    /// (one record per key) and stores the offsets of its input. A crash repeats at most the work
    /// since (and since the consumer's last commit), with the same command ids and bytes.
    public var saveInterval: Duration
    /// The thumbnail service stage 1 asks for image attachments (rule 10); `nil`: none.
    public var thumbnails: ThumbnailSettings?
    /// How much later than its partition's wall-clock progress a record may reach Kafka and still be
    /// folded in event-time order (see ``EventTimeMerge``); it is also what stage 2 waits at least
    /// for a record while stage 1 is quiet.
    public var lateness: Duration
    /// The longest a record waits in a stage's event-time merge for every input to pass its time.
    public var maximumEventTimeWait: Duration
    /// How often stage-1 tasks send changed progress marks to the partitions of notify.fanout. A
    /// reader in one instance takes it that the writers in the others send theirs as often.
    public var markInterval: Duration
    /// ``markInterval`` unless set.
    public static let defaultMarkInterval: Duration = .milliseconds(20)
    /// How often the tasks tell readers in this instance their marks (``LocalProgressBoard``), between
    /// the sends through Kafka: a task's mark moves on while it makes no records too, and its readers
    /// here, which wait for every local writer, learn it this soon rather than at the next send (and
    /// after every batch the stage reads: a batch may say an input is now read to its end).
    public var localMarkInterval: Duration = .milliseconds(5)
    /// How often records waiting in the event-time merge are checked between batches while their
    /// merge cannot foresee when the wall clock lets them go (a floor that records or marks move
    /// holds them); the others are looked at when foreseen.
    public var releaseCheckInterval: Duration = .milliseconds(1)
    /// How often the cluster is asked for metadata, for the probes (``PipelineObserver/onClusterCheck``).
    public var clusterCheckInterval: Duration = .seconds(2)

    public init(
        client: KafkaClientConfiguration, groupId: String = "notify", stages: Set<StageName> = Set(StageName.allCases),
        core: CoreConfiguration, maxRecordBytes: Int = 1_000_000, tickInterval: Duration = .milliseconds(250),
        saveInterval: Duration = .seconds(5), thumbnails: ThumbnailSettings? = nil,
        lateness: Duration = .milliseconds(10), maximumEventTimeWait: Duration = .seconds(30),
        markInterval: Duration = Self.defaultMarkInterval
    ) {
        precondition(saveInterval > .zero, "a save interval must be positive")
        precondition(markInterval > .zero, "a mark interval must be positive")
        self.lateness = lateness
        self.maximumEventTimeWait = maximumEventTimeWait
        self.markInterval = markInterval
        self.client = client
        self.groupId = groupId
        self.stages = stages
        self.core = core
        self.maxRecordBytes = maxRecordBytes
        self.tickInterval = tickInterval
        self.saveInterval = saveInterval
        self.thumbnails = thumbnails
    }
}

/// The two stages of the design brief on Kafka, as one consumer-group member.
///
/// Stage 1 (`fanout`) reads chat.messages with chat.conversations
/// (co-partitioned) and the whole of chat.identities; stage 2 (`route`) reads
/// notify.fanout with the user tables. Each input partition is a task with its
/// own state, restored from the stage's changelog before it processes a
/// record. ``run()`` returns when the task running it is cancelled, after
/// finishing in-flight work, committing and leaving the group.
public final class PipelineInstance: Sendable {
    private let settings: PipelineSettings
    private let observer: PipelineObserver
    private let logger: Logger
    private let readiness = Mutex<Set<String>>([])

    public init(settings: PipelineSettings, observer: PipelineObserver = .init(), logger: Logger) {
        self.settings = settings
        self.observer = observer
        self.logger = logger
    }

    /// True once the identity table is loaded and every stage has restored its first assignment.
    public var isReady: Bool {
        readiness.withLock { $0.isSuperset(of: requiredReadiness) }
    }

    private var requiredReadiness: Set<String> {
        Set(settings.stages.map(\.rawValue) + (settings.stages.contains(.fanout) ? ["identities"] : []))
    }

    /// Runs until cancelled.
    public func run() async throws {
        let admin = try KafkaAdmin(configuration: settings.client, logger: logger)
        try await checkCoPartitioning(admin)
        // A notification waits at most 1 ms for a batch to fill, at each of the two hops (librdkafka's
        // default is 5 ms); under load batches fill anyway. `-X linger.ms=…` overrides it.
        let producer = try KafkaProducer(
            configuration: settings.largeRecordClient(property: "message.max.bytes"),
            settings: KafkaProducerSettings(lingerMilliseconds: 1), logger: logger)
        let restorer = ChangelogRestorer(client: settings.client, admin: admin, logger: logger)
        let deadLetters = DeadLetterWriter(
            limit: DeadLetterLimit(of: Topic.dlq, client: settings.client, logger: logger), producer: producer,
            observer: observer,
            logger: logger)
        let limits = RecordLimits(maxRecordBytes: settings.maxRecordBytes)
        let localMarks = LocalProgressBoard()
        let tracing = RecordTracing.bootstrapped
        do {
            try await withThrowingTaskGroup(of: Void.self) { group in
                if settings.stages.contains(.fanout) {
                    let stage = FanoutStage(configuration: settings.core)
                    let identities = IdentityTable(
                        client: settings.client, admin: admin, limits: limits, deadLetters: deadLetters, logger: logger)
                    let (directory, positions) = try await identities.load(into: stage)
                    markReady("identities")
                    let runner = StageRunner(
                        logic: FanoutStageLogic(stage: stage, identities: directory), producer: producer,
                        restorer: restorer, observer: observer, limits: limits, deadLetters: deadLetters,
                        saveInterval: settings.saveInterval,
                        merge: EventTimeMerge(
                            markedTopics: [
                                Topic.fanoutRepartition: try await partitionCount(of: Topic.messages, admin)
                            ],
                            lateness: settings.lateness.milliseconds, maximumWait: settings.maximumEventTimeWait,
                            markInterval: settings.markInterval, localMarks: localMarks),
                        partitionCount: try await partitionCount(of: Topic.messages, admin),
                        markPartitions: try await partitionCount(of: Topic.fanout, admin), tracing: tracing,
                        logger: logger)
                    let thumbnails = settings.thumbnails.map { MessageThumbnails(settings: $0, logger: logger) }
                    await runner.expectBroadcast(of: Topic.identities, partitions: positions.keys.map(\.partition))
                    group.addTask { try await self.consume(with: runner, thumbnails: thumbnails) }
                    group.addTask {
                        try await identities.follow(from: positions, reportInterval: self.settings.tickInterval) {
                            records, lagging in
                            try await runner.broadcast(records, of: Topic.identities, lagging: lagging)
                        }
                    }
                    group.addTask { try await self.tick(runner) }
                    group.addTask { try await self.announceMarks(runner) }
                    group.addTask { try await self.releaseDue(runner) }
                }
                if settings.stages.contains(.route) {
                    let runner = StageRunner(
                        logic: RouteStageLogic(stage: RouteStage(configuration: settings.core)), producer: producer,
                        restorer: restorer, observer: observer, limits: limits, deadLetters: deadLetters,
                        saveInterval: settings.saveInterval,
                        merge: EventTimeMerge(
                            markedTopics: [
                                Topic.fanout: try await partitionCount(of: Topic.messages, admin),
                                Topic.routeRepartition: try await partitionCount(of: Topic.fanout, admin),
                            ],
                            lateness: settings.lateness.milliseconds, maximumWait: settings.maximumEventTimeWait,
                            markInterval: settings.markInterval, localMarks: localMarks),
                        partitionCount: try await partitionCount(of: Topic.fanout, admin), markPartitions: nil,
                        tracing: tracing,
                        logger: logger)
                    group.addTask { try await self.consume(with: runner) }
                    group.addTask { try await self.tick(runner) }
                    group.addTask { try await self.announceMarks(runner) }
                    group.addTask { try await self.releaseDue(runner) }
                }
                group.addTask {
                    let watch = ClusterWatch(
                        client: self.settings.client, topic: Topic.dlq, interval: self.settings.clusterCheckInterval)
                    try await watch.run(logger: self.logger, report: self.observer.onClusterCheck)
                }
                try await group.waitForAll()
            }
        } catch is CancellationError {
            // Stopped on purpose.
        } catch {
            await producer.close()
            throw error
        }
        await producer.close()
    }

    /// One stage's consumer-group member: joins, processes batches, and on
    /// cancellation leaves the group after its work is finished and committed.
    /// With `thumbnails`, each batch gets its image attachments' thumbnails before it is processed.
    private func consume<Logic: StageLogic>(with runner: StageRunner<Logic>, thumbnails: MessageThumbnails? = nil)
        async throws
    {
        let logic = runner.logic
        let stageName = logic.name.rawValue
        let consumer = try KafkaConsumer(
            configuration: .init(
                client: settings.largeRecordClient(property: "max.partition.fetch.bytes"),
                groupId: "\(settings.groupId).\(stageName)", assignmentStrategy: .range),
            hooks: RebalanceHooks(
                assigned: { [logger] partitions in
                    do {
                        try await runner.assign(Array(Set(partitions.map(\.partition))).sorted())
                        self.markReady(stageName)
                        self.observer.onPartitions(logic.name, true)
                    } catch {
                        logger.critical("Could not restore the \(stageName) state: \(error)")
                    }
                },
                revoked: { partitions in
                    await runner.revoke(Array(Set(partitions.map(\.partition))).sorted())
                    // The stage's eager (range) protocol gives every partition up in a revocation.
                    self.observer.onPartitions(logic.name, false)
                }
            ),
            logger: logger)
        await runner.attach(consumer)
        try consumer.subscribe(logic.inputTopics)
        logger.info(
            "Stage \(stageName) joined group \(settings.groupId).\(stageName)",
            metadata: ["topics": "\(logic.inputTopics)"])
        // Each batch's events are decoded here, off the runner's actor (``ConsumedRecord``): the actor may
        // meanwhile release what its merges let go, but the next batch is read only once this one is in.
        try await consumer.forEachBatch { batch in
            let batch = await thumbnails?.apply(to: batch, lag: (try? consumer.lag()) ?? [:]) ?? batch
            try await runner.process(ConsumedRecord.decodingAhead(batch, logic: logic, limits: runner.limits))
        }
        try Task.checkCancellation()
    }

    private func tick<Logic: StageLogic>(_ runner: StageRunner<Logic>) async throws {
        while !Task.isCancelled {
            try await Task.sleep(for: settings.tickInterval)
            try await runner.tick()
        }
    }

    /// Releases the runner's waiting records when the wall clock lets them go, as its merges foresee,
    /// or every ``PipelineSettings/releaseCheckInterval`` while one cannot foresee it, and sleeps
    /// otherwise until the runner rings (``StageRunner/releaseAlarm``; a record that comes is looked
    /// at as it is read): a quiet pipeline does not wake a thousand times a second.
    private func releaseDue<Logic: StageLogic>(_ runner: StageRunner<Logic>) async throws {
        let interval = settings.releaseCheckInterval
        let alarm = runner.releaseAlarm
        var next: ContinuousClock.Instant?
        while true {
            await alarm.wait(until: next)
            if Task.isCancelled { return }
            next = try await runner.releaseDue(checkInterval: interval)
        }
    }

    /// Sends the runner's changed progress marks every ``PipelineSettings/markInterval``, and tells
    /// the board its marks every ``PipelineSettings/localMarkInterval`` between, unless the stage is
    /// idle (``StageRunner/publishLocalMarks()``): then it wakes for the sends alone.
    private func announceMarks<Logic: StageLogic>(_ runner: StageRunner<Logic>) async throws {
        var sent = ContinuousClock.now
        var idle = false
        while !Task.isCancelled {
            if idle {
                try await Task.sleep(until: sent + settings.markInterval, clock: .continuous)
            } else {
                try await Task.sleep(for: min(settings.markInterval, settings.localMarkInterval))
            }
            if ContinuousClock.now - sent >= settings.markInterval {
                sent = .now
                try await runner.announceMarks()
                idle = false
            } else {
                idle = await runner.publishLocalMarks()
            }
        }
    }

    private func markReady(_ part: String) {
        let becameReady = readiness.withLock { parts in
            let before = parts.isSuperset(of: requiredReadiness)
            parts.insert(part)
            return !before && parts.isSuperset(of: requiredReadiness)
        }
        if becameReady { observer.onReady() }
    }

    /// The partition count of `topic`, which must exist.
    private func partitionCount(of topic: String, _ admin: KafkaAdmin) async throws -> Int32 {
        guard let metadata = try await admin.metadata(of: topic) else {
            throw PipelineError("the topic \(topic) does not exist: create the topics first (notify topics create)")
        }
        return Int32(metadata.partitionCount)
    }

    /// Refuses to run when co-partitioned topics differ in partition count.
    private func checkCoPartitioning(_ admin: KafkaAdmin) async throws {
        let groups: [(StageName, [String])] = [
            (.fanout, FanoutStageLogic.coPartitionedTopics), (.route, RouteStageLogic.coPartitionedTopics),
        ]
        for (stage, topics) in groups where settings.stages.contains(stage) {
            var counts: [(String, Int)] = []
            for topic in topics {
                guard let metadata = try await admin.metadata(of: topic) else {
                    throw PipelineError(
                        "the topic \(topic) does not exist: create the topics first (notify topics create)")
                }
                counts.append((topic, metadata.partitionCount))
            }
            if Set(counts.map(\.1)).count > 1 {
                throw PipelineError(
                    """
                    the \(stage.rawValue) stage needs its co-partitioned topics to have the same number of partitions, \
                    but they have: \(counts.map { "\($0.0) \($0.1)" }.joined(separator: ", ")). \
                    Recreate them with equal counts (Schemas/topics.json).
                    """)
            }
        }
    }
}

extension PipelineSettings {
    /// The client settings with room for records over the limit in `property`
    /// (`max.partition.fetch.bytes` to read them whole, `message.max.bytes` so that the producer
    /// itself refuses no dead letter the topic takes), up to four times the limit.
    func largeRecordClient(property: String) -> KafkaClientConfiguration {
        var client = client
        if client.properties[property] == nil {
            client.properties[property] = String(max(1_048_576, maxRecordBytes * 4))
        }
        return client
    }
}

extension FanoutStageLogic {
    static let coPartitionedTopics = [
        Topic.messages, Topic.conversations, Topic.fanoutRepartition, Topic.fanoutChangelog,
    ]
}

extension RouteStageLogic {
    static let coPartitionedTopics = [
        Topic.fanout, Topic.devices, Topic.preferences, Topic.clientState, Topic.reads, Topic.outcomes,
        Topic.routeRepartition,
        Topic.routeChangelog,
    ]
}
