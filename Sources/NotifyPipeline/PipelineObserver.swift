import NotifyCore
import NotifyKafka
import NotifyRecords

/// Hooks for what the pipeline does, for logs, metrics and the live console.
/// Each is called after the fact and must return quickly.
public struct PipelineObserver: Sendable {
    /// Records were read from input topics.
    public var onConsumed: @Sendable (_ records: [KafkaRecord]) -> Void
    /// Deliveries were not made, and why.
    public var onDecisions: @Sendable (_ decisions: [Decision]) -> Void
    /// Records were acknowledged by the broker: every output record, the
    /// commands among them, and the dead letters.
    public var onProduced:
        @Sendable (_ records: [OutgoingRecord], _ commands: [NotificationCommand], _ deadLetters: [DeadLetter]) -> Void
    /// The identity table is loaded and every stage has restored its first assignment.
    public var onReady: @Sendable () -> Void
    /// Now and then: how far behind each input partition is.
    public var onLag: @Sendable (_ lag: [TopicPartition: Int64]) -> Void
    /// A stage finished the work of a batch of `records` records read: the time from the batch's
    /// arrival to the broker's acknowledgement of everything the batch made, which each of them took.
    public var onProcessed: @Sendable (_ stage: StageName, _ records: Int, _ duration: Duration) -> Void
    /// A stage's actor worked for `duration` on a batch read, or on a pass over its tasks (releasing
    /// what waited, moving clocks on, computing marks); its hand-off to the producer is not counted.
    /// Each stage of an instance folds on one actor, so its busy time per second of wall clock is the
    /// share of one core it keeps: near 1, the stage is saturated on this instance.
    public var onBusy: @Sendable (_ stage: StageName, _ duration: Duration) -> Void
    /// Messages began waiting for their sender's identity (`waits`), and messages went out without
    /// it after the wait (`timeouts`).
    public var onIdentityWaits: @Sendable (_ waits: Int, _ timeouts: Int) -> Void
    /// A stage folded `count` records because they had waited the event-time merge's maximum wait,
    /// not because every input had passed their time (a stuck or absent stage-1 task, or an input
    /// whose records stopped coming).
    public var onReleasedByMaximumWait: @Sendable (_ stage: StageName, _ count: Int) -> Void
    /// A stage folded `count` records after a record that comes later in event-time order: they
    /// were read more than `pipeline.lateness` after the stage's event clock passed their `at` (or came
    /// after a record the maximum wait let go), and were folded out of the order `notify render`
    /// folds them in.
    public var onFoldedLate: @Sendable (_ stage: StageName, _ count: Int) -> Void
    /// A stage read `count` records of `topic` after it had let records go past their `at`, as if
    /// nothing earlier could still come: later than `pipeline.lateness` allows. Named by the topic
    /// they came from, they fold out of `notify render`'s order in that stage (``onFoldedLate``), in
    /// the next through the stage's marks, or nowhere if nothing later was folded yet. An identity,
    /// which every fanout task reads, counts once.
    public var onReadLate: @Sendable (_ topic: String, _ count: Int) -> Void
    /// A stage folded records its event-time merge had held: how long each waited, from its read to
    /// its fold (in stage 1 about `pipeline.lateness` while its inputs are quiet).
    public var onEventTimeWaits: @Sendable (_ stage: StageName, _ waits: [Duration]) -> Void
    /// `count` records of `topic` were not in the partition murmur2 of their key gives, and were
    /// forwarded to the stage's repartition topic.
    public var onMisplaced: @Sendable (_ topic: String, _ count: Int) -> Void
    /// A check of the Kafka cluster finished (``ClusterWatch``): it answered, or not in time.
    public var onClusterCheck: @Sendable (_ reachable: Bool) -> Void
    /// A dead letter could not be written, even without its value, and was given up (it is logged
    /// with its source).
    public var onDeadLetterLost: @Sendable (_ letter: DeadLetter) -> Void
    /// A stage's consumer was given its partitions (possibly none), or gave them all up in a rebalance.
    public var onPartitions: @Sendable (_ stage: StageName, _ held: Bool) -> Void

    public init(
        onConsumed: @escaping @Sendable ([KafkaRecord]) -> Void = { _ in },
        onDecisions: @escaping @Sendable ([Decision]) -> Void = { _ in },
        onProduced: @escaping @Sendable ([OutgoingRecord], [NotificationCommand], [DeadLetter]) -> Void = { _, _, _ in
        },
        onReady: @escaping @Sendable () -> Void = {},
        onLag: @escaping @Sendable ([TopicPartition: Int64]) -> Void = { _ in },
        onIdentityWaits: @escaping @Sendable (Int, Int) -> Void = { _, _ in },
        onProcessed: @escaping @Sendable (StageName, Int, Duration) -> Void = { _, _, _ in },
        onBusy: @escaping @Sendable (StageName, Duration) -> Void = { _, _ in },
        onReleasedByMaximumWait: @escaping @Sendable (StageName, Int) -> Void = { _, _ in },
        onFoldedLate: @escaping @Sendable (StageName, Int) -> Void = { _, _ in },
        onReadLate: @escaping @Sendable (String, Int) -> Void = { _, _ in },
        onEventTimeWaits: @escaping @Sendable (StageName, [Duration]) -> Void = { _, _ in },
        onMisplaced: @escaping @Sendable (String, Int) -> Void = { _, _ in },
        onClusterCheck: @escaping @Sendable (Bool) -> Void = { _ in },
        onPartitions: @escaping @Sendable (StageName, Bool) -> Void = { _, _ in },
        onDeadLetterLost: @escaping @Sendable (DeadLetter) -> Void = { _ in }
    ) {
        self.onMisplaced = onMisplaced
        self.onReleasedByMaximumWait = onReleasedByMaximumWait
        self.onFoldedLate = onFoldedLate
        self.onReadLate = onReadLate
        self.onEventTimeWaits = onEventTimeWaits
        self.onDeadLetterLost = onDeadLetterLost
        self.onClusterCheck = onClusterCheck
        self.onPartitions = onPartitions
        self.onProcessed = onProcessed
        self.onBusy = onBusy
        self.onLag = onLag
        self.onIdentityWaits = onIdentityWaits
        self.onConsumed = onConsumed
        self.onDecisions = onDecisions
        self.onProduced = onProduced
        self.onReady = onReady
    }

    func consumed(_ records: [KafkaRecord]) {
        if !records.isEmpty { onConsumed(records) }
    }

    func decided(_ decisions: [Decision]) {
        if !decisions.isEmpty { onDecisions(decisions) }
    }

    func produced(_ records: [OutgoingRecord], commands: [NotificationCommand], deadLetters: [DeadLetter]) {
        if !records.isEmpty { onProduced(records, commands, deadLetters) }
    }
}
