import Logging
import NotifyCore
import NotifyKafka
import NotifyRecords

/// `chat.identities`, read in full by every instance: loaded up to its end
/// before stage 1 starts, then followed, each event handed to every stage-1 task.
///
/// Its bad records are dead-lettered here, once per reading (not once per task): at load and as
/// they arrive. The topic has no committed position, so each start of an instance dead-letters the
/// bad records it loads again (the source headers tell a repeat).
struct IdentityTable: Sendable {
    let client: KafkaClientConfiguration
    let admin: KafkaAdmin
    let limits: RecordLimits
    let deadLetters: DeadLetterWriter
    let logger: Logger

    /// Reads the topic from the beginning up to its current end and returns
    /// the identity directory as a stage-1 state, and where to follow from.
    func load(into stage: FanoutStage) async throws -> (state: FanoutState, positions: [TopicPartition: Int64]) {
        let partitions = try await partitionsOfTopic()
        var state = FanoutState()
        var positions: [TopicPartition: Int64] = [:]
        let restorer = ChangelogRestorer(client: client, admin: admin, logger: logger)
        var total = 0
        var rejected = 0
        for partition in partitions {
            let result = try await restorer.read(topic: Topic.identities, partition: partition.partition, from: 0)
            var letters: [DeadLetter] = []
            for record in result.records {
                switch read(record) {
                case .input(let input): _ = stage.fold(&state, input)
                case .bad(let letter): letters.append(letter)
                }
            }
            rejected += letters.count
            await deadLetters.deadLetter(letters)
            positions[partition] = result.position
            total += result.records.count
            logger.info("Identity table: \(partition) loaded", metadata: ["records": "\(result.records.count)"])
        }
        logger.info(
            "Identity table loaded",
            metadata: [
                "identities": "\(state.identityCount)", "records": "\(total)", "unreadable": "\(rejected)",
            ])
        return (state, positions)
    }

    /// Follows the topic from `positions`, handing each batch of readable identity records to `deliver`
    /// with, per partition, whether records wait in Kafka beyond those read, until cancelled. Between
    /// batches it says where it stands every `reportInterval` (with no records): a partition counts as
    /// lagging until its consumer knows its end, so the tasks wait for identities produced before
    /// the messages that name them, also before the first batch, and stop waiting once the follower
    /// has read to the end, also when the topic brings nothing. Until its consumer knows the end of
    /// every partition (from its first fetch of each), it says where it stands sooner, from
    /// ``firstReportPoll`` on: the tasks hold every message meanwhile, and at the pipeline's
    /// `reportInterval` (its 250 ms `tickInterval`) a start held them that long after the consumer
    /// knew.
    func follow(
        from positions: [TopicPartition: Int64], reportInterval: Duration,
        deliver: @escaping @Sendable (_ records: [KafkaRecord], _ lagging: [Int32: Bool]) async throws -> Void
    ) async throws {
        let consumer = try KafkaConsumer(
            configuration: .init(client: client, groupId: "notify-identities"), logger: logger)
        try consumer.assign(positions.mapValues { .offset($0) })
        let partitions = Array(positions.keys)
        /// Per partition, whether records wait in Kafka (also while its end is not known); and whether
        /// the end of every partition is known.
        @Sendable func standing() -> (lagging: [Int32: Bool], known: Bool) {
            let lag = (try? consumer.lag()) ?? [:]
            let lagging: [Int32: Bool] = Dictionary(
                uniqueKeysWithValues: partitions.map { ($0.partition, lag[$0].map { $0 > 0 } ?? true) })
            return (lagging, partitions.allSatisfy { lag[$0] != nil })
        }
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask {
                try await consumer.forEachBatch { batch in
                    var readable: [KafkaRecord] = []
                    var letters: [DeadLetter] = []
                    for record in batch {
                        switch read(record) {
                        case .input: readable.append(record)
                        case .bad(let letter): letters.append(letter)
                        }
                    }
                    await deadLetters.deadLetter(letters)
                    try await deliver(readable, standing().lagging)
                }
            }
            group.addTask {
                // A record taken from the consumer and not yet delivered does not count as waiting,
                // for the moment it takes: the tasks allow any input `pipeline.lateness` for that.
                let firstPoll = min(reportInterval, Self.firstReportPoll)
                var poll = firstPoll
                while true {
                    let (lagging, known) = standing()
                    try await deliver([], lagging)
                    if known {
                        poll = firstPoll
                        try await Task.sleep(for: reportInterval)
                    } else {
                        try await Task.sleep(for: poll)
                        poll = min(poll * 2, reportInterval)  // A broker out of reach: every task hears each report.
                    }
                }
            }
            try await group.next()
            group.cancelAll()
        }
    }

    /// How soon the follower says where it stands again while its consumer does not know the end of
    /// every partition; the wait doubles at each report that still does not know (up to the report
    /// interval), so a broker out of reach at the start does not cost every task a report every 2 ms.
    static let firstReportPoll: Duration = .milliseconds(2)

    /// What an identity record reads as.
    private enum Reading {
        case input(FanoutInput)
        case bad(DeadLetter)
    }

    /// The stage-1 input an identity record is, or its dead letter: a record without a key (the
    /// topic is compacted by user id), over the size limit, not JSON, against the schema or of
    /// another type. The tasks that hear a record read it again and find it good.
    private func read(_ record: KafkaRecord) -> Reading {
        guard record.key != nil else {
            return .bad(
                DeadLetter(
                    record,
                    reason: """
                        \(Topic.identities): the record has no key; producers must key it by user id as Schemas/topics.json says, \
                        so that compaction keeps each user's latest identity
                        """))
        }
        guard record.value.count <= limits.maxRecordBytes else {
            return .bad(
                DeadLetter(
                    record,
                    reason: "record of \(record.value.count) bytes is over the limit of \(limits.maxRecordBytes) bytes")
            )
        }
        do {
            guard let input = try InputEvent.decode(topic: Topic.identities, value: record.value).fanoutInput else {
                return .bad(DeadLetter(record, reason: "\(Topic.identities): not an input of the fanout stage"))
            }
            return .input(input)
        } catch {
            return .bad(DeadLetter(record, reason: error.description))
        }
    }

    private func partitionsOfTopic() async throws -> [TopicPartition] {
        guard let metadata = try await admin.metadata(of: Topic.identities) else {
            throw PipelineError(
                "the topic \(Topic.identities) does not exist: create the topics first (notify topics create)")
        }
        return (0..<Int32(metadata.partitionCount)).map { TopicPartition(topic: Topic.identities, partition: $0) }
    }
}

/// A condition that stops the pipeline, with what to do about it.
public struct PipelineError: Error, CustomStringConvertible {
    public let description: String

    init(_ description: String) {
        self.description = description
    }
}
