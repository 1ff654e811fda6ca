import Logging
import NotifyCore
import NotifyKafka

/// What to replay.
public struct ReplaySettings: Sendable {
    public var client: KafkaClientConfiguration
    public var core: CoreConfiguration
    /// Commands of events before this time are not written (state is still rebuilt from them).
    public var from: EventTime?
    /// Commands of events after this time are not written.
    public var until: EventTime?
    /// Where the commands go.
    public var targetTopic: String

    public init(
        client: KafkaClientConfiguration, core: CoreConfiguration, from: EventTime? = nil,
        until: EventTime? = nil, targetTopic: String
    ) {
        self.client = client
        self.core = core
        self.from = from
        self.until = until
        self.targetTopic = targetTopic
    }
}

/// What a replay did.
public struct ReplaySummary: Sendable {
    public var recordsRead = 0
    public var commandsWritten = 0
    public var commandsOutsideWindow = 0
    public var rejected: [String] = []
}

/// `notify replay`: re-runs both stages over the history of the input topics
/// (up to their ends as they stand when it starts) and writes the commands to
/// a topic of your choice. State is rebuilt as it goes, with the very folds
/// the live pipeline and `notify render` run. It reads with a consumer of its
/// own and commits nothing, so the live group is untouched.
public struct Replay: Sendable {
    /// The topics whose history is replayed.
    public static let inputTopics = EventOrder.topics.filter { $0 != Topic.fanout }

    let settings: ReplaySettings
    let logger: Logger

    public init(settings: ReplaySettings, logger: Logger) {
        self.settings = settings
        self.logger = logger
    }

    /// Runs the replay; `progress` hears a line now and then.
    public func run(progress: @Sendable (String) -> Void) async throws -> ReplaySummary {
        let admin = try KafkaAdmin(configuration: settings.client, logger: logger)
        var ends: [TopicPartition: Int64] = [:]
        for topic in Self.inputTopics {
            guard let metadata = try await admin.metadata(of: topic) else { continue }
            for partition in 0..<Int32(metadata.partitionCount) {
                let topicPartition = TopicPartition(topic: topic, partition: partition)
                let (low, high) = try await admin.watermarks(topicPartition)
                if high > low { ends[topicPartition] = high }
            }
        }
        let total = ends.values.reduce(0, +)
        progress("replay: reading history of \(ends.count) partition(s) up to their current ends")
        var records: [KafkaRecord] = []
        if !ends.isEmpty {
            let consumer = try KafkaConsumer(
                configuration: .init(client: settings.client, groupId: "notify-replay", maxBatchSize: 5_000),
                logger: logger)
            try consumer.assign(ends.mapValues { _ in .beginning })
            var remaining = Set(ends.keys)
            var nextReport = 50_000
            reading: for try await batch in consumer.batches {
                for record in batch where record.offset < ends[record.topicPartition] ?? 0 {
                    records.append(record)
                    if record.offset == ends[record.topicPartition]! - 1 { remaining.remove(record.topicPartition) }
                }
                if records.count >= nextReport {
                    progress("replay: read \(records.count) of at most \(total) records")
                    nextReport += 50_000
                }
                if remaining.isEmpty { break reading }
            }
            await consumer.close()
        }
        var summary = ReplaySummary()
        summary.recordsRead = records.count
        progress("replay: read \(records.count) records; running the stages")
        var events: [ScenarioRunner.Event] = []
        events.reserveCapacity(records.count)
        for record in records {  // The runner folds them in event-time order.
            do {
                events.append(ScenarioRunner.Event(topic: record.topic, value: try CoreJSON.parse(record.value)))
            } catch {
                summary.rejected.append("\(record.topicPartition)@\(record.offset): \(error)")
            }
        }
        let result = ScenarioRunner(configuration: settings.core).run(events: events)
        summary.rejected += result.rejections.map(\.reason)
        let window = result.commands.filter { command in
            guard let at = EventTime(rfc3339: command.at) else { return true }
            return (settings.from.map { at >= $0 } ?? true) && (settings.until.map { at <= $0 } ?? true)
        }
        summary.commandsOutsideWindow = result.commands.count - window.count
        let producer = try KafkaProducer(configuration: settings.client, logger: logger)
        do {
            summary.commandsWritten = try await producer.send(window.map { $0.record(topic: settings.targetTopic) })
                .count
        } catch {
            await producer.close()
            throw error
        }
        await producer.close()
        progress("replay: wrote \(summary.commandsWritten) command(s) to \(settings.targetTopic)")
        return summary
    }
}
