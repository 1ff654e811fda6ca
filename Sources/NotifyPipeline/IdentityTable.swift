import Kafka
import Logging
import NotifyCore

/// `chat.identities`, read in full by every instance: loaded up to its end
/// before stage 1 starts, then followed, each event handed to every stage-1 task.
struct IdentityTable: Sendable {
    let client: KafkaClientConfiguration
    let admin: KafkaAdmin
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
            for record in result.records {
                guard let input = try? InputEvent.decode(topic: Topic.identities, value: record.value).fanoutInput else {
                    rejected += 1
                    continue
                }
                _ = stage.fold(&state, input)
            }
            positions[partition] = result.position
            total += result.records.count
            logger.info("Identity table: \(partition) loaded", metadata: ["records": "\(result.records.count)"])
        }
        logger.info("Identity table loaded", metadata: [
            "identities": "\(state.identityCount)", "records": "\(total)", "unreadable": "\(rejected)",
        ])
        return (state, positions)
    }

    /// Follows the topic from `positions`, handing each batch of readable identity records to `deliver`
    /// with, per partition, whether records wait in Kafka beyond those read, until cancelled.
    func follow(
        from positions: [TopicPartition: Int64],
        deliver: @escaping @Sendable (_ records: [KafkaRecord], _ lagging: [Int32: Bool]) async throws -> Void
    ) async throws {
        let consumer = try KafkaConsumer(
            configuration: .init(client: client, groupId: "notify-identities"), logger: logger)
        try consumer.assign(positions.mapValues { .offset($0) })
        try await consumer.forEachBatch { batch in
            var readable: [KafkaRecord] = []
            for record in batch {
                do {
                    _ = try InputEvent.decode(topic: Topic.identities, value: record.value)
                    readable.append(record)
                } catch let error as EventDecodingError {
                    logger.warning("Unreadable identity record skipped: \(error)", metadata: [
                        "partition": "\(record.partition)", "offset": "\(record.offset)",
                    ])
                }
            }
            let lag = (try? consumer.lag()) ?? [:]
            try await deliver(readable, Dictionary(uniqueKeysWithValues: positions.keys.map { ($0.partition, (lag[$0] ?? 0) > 0) }))
        }
    }

    private func partitionsOfTopic() async throws -> [TopicPartition] {
        guard let metadata = try await admin.metadata(of: Topic.identities) else {
            throw PipelineError("the topic \(Topic.identities) does not exist: create the topics first (notify topics create)")
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
