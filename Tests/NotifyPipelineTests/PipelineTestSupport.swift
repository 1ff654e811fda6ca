import Foundation
import Logging
import NotifyCore
import NotifyKafka
import NotifyRecords
import Synchronization
import Testing

@testable import NotifyPipeline

let testLogger: Logger = {
    var logger = Logger(label: "notify.pipeline-tests")
    logger.logLevel =
        ProcessInfo.processInfo.environment["NOTIFY_TEST_LOG"].flatMap(Logger.Level.init(rawValue:)) ?? .warning
    return logger
}()

/// The repository root, found from this file's path.
let repositoryRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
    .deletingLastPathComponent()

/// The core configuration from the repository's Schemas, with a short background-push interval so
/// coalesced badge pushes come out within a test.
func testCoreConfiguration() throws -> CoreConfiguration {
    var configuration = try CoreConfiguration.load(
        schemasDirectory: repositoryRoot.appendingPathComponent("Schemas").path)
    configuration.backgroundPushIntervalMilliseconds = 1_000
    return configuration
}

/// Every topic of the catalog, with `partitions` partitions each (co-partitioned) unless `unequal` gives
/// a topic another count, on a fresh embedded broker.
func withPipelineBroker<T>(
    partitions: Int32 = 4, unequal: [String: Int32] = [:], _ body: (EmbeddedBroker) async throws -> T
) async throws -> T {
    let catalog = try TopicCatalog.load(from: repositoryRoot.appendingPathComponent("Schemas/topics.json"))
    return try await EmbeddedBroker.withBroker(logger: testLogger) { broker in
        for topic in catalog.topics {
            try await broker.createTopic(topic.name, partitions: unequal[topic.name] ?? partitions)
        }
        return try await body(broker)
    }
}

func client(_ broker: EmbeddedBroker) -> KafkaClientConfiguration {
    KafkaClientConfiguration(
        bootstrapServers: broker.bootstrapServers, clientId: "pipeline-tests",
        properties: EmbeddedBroker.clientProperties)
}

/// One event of a scenario, as JSON text.
struct ScenarioEvent {
    var topic: String
    var json: String
}

/// The events of a scenario file.
func scenarioEvents(_ path: String) throws -> [ScenarioEvent] {
    let bytes = try [UInt8](Data(contentsOf: repositoryRoot.appendingPathComponent(path)))
    return try ScenarioRunner.events(of: bytes).map {
        ScenarioEvent(topic: $0.topic, json: String(decoding: CoreJSON.encode($0.value), as: UTF8.self))
    }
}

/// What `notify render` makes of the same events.
func rendered(_ events: [ScenarioEvent], configuration: CoreConfiguration) throws -> [NotificationCommand] {
    let runnerEvents = try events.map { ScenarioRunner.Event(topic: $0.topic, value: try CoreJSON.parse($0.json)) }
    return ScenarioRunner(configuration: configuration).run(events: runnerEvents).commands
}

/// Produces events keyed and timestamped as `notify produce` does, in order, `spacing` apart
/// (a live backend publishes events as they happen, not all in one burst).
func produce(_ events: [ScenarioEvent], to broker: EmbeddedBroker, spacing: Duration = .zero) async throws {
    let producer = try KafkaProducer(configuration: client(broker), logger: testLogger)
    for event in events {
        if spacing > .zero { try await Task.sleep(for: spacing) }
        _ = try await producer.send(try outgoingRecord(event))
    }
    await producer.close()
}

/// `event` as a users' producer writes it: keyed by its key, with its `at` as the record timestamp.
func outgoingRecord(_ event: ScenarioEvent) throws -> OutgoingRecord {
    let decoded = try InputEvent.decode(topic: event.topic, value: Array(event.json.utf8))
    return OutgoingRecord(
        topic: event.topic, key: Array(decoded.key.utf8), value: Array(event.json.utf8),
        timestampMilliseconds: decoded.at.milliseconds)
}

/// Produces raw records (for bad input); returns where each went.
@discardableResult
func produceRaw(_ records: [OutgoingRecord], to broker: EmbeddedBroker) async throws -> [DeliveryReport] {
    let producer = try KafkaProducer(
        configuration: KafkaClientConfiguration(
            bootstrapServers: broker.bootstrapServers, clientId: "pipeline-tests",
            properties: ["message.max.bytes": "4000000"]),
        logger: testLogger)
    let reports = try await producer.send(records)
    await producer.close()
    return reports
}

/// Reads a topic from the beginning until `condition` holds for what was read (or the time is up).
/// The records of `topic`, without stage 1's value-less progress marks on notify.fanout unless `marks`.
func readTopic(
    _ topic: String, from broker: EmbeddedBroker, timeout: Duration = .seconds(60), marks: Bool = false,
    until condition: @escaping @Sendable ([KafkaRecord]) -> Bool
) async throws -> [KafkaRecord] {
    var reader = client(broker)
    reader.properties["max.partition.fetch.bytes"] = "4000000"
    let consumer = try KafkaConsumer(
        configuration: .init(client: reader, groupId: "reader-\(UUID().uuidString)"), logger: testLogger)
    try consumer.subscribe([topic])
    // How many records were read, for the message of a timeout: a slow run and a stalled one differ.
    let read = ReadCount()
    let result = try await withThrowingTaskGroup(of: [KafkaRecord]?.self) { group in
        group.addTask {
            var records: [KafkaRecord] = []
            if condition(records) { return records }
            for try await batch in consumer.batches {
                records += batch.filter { marks || !$0.isProgressMark }
                read.count.withLock { $0 = records.count }
                if condition(records) { return records }
            }
            return records
        }
        group.addTask {
            try await Task.sleep(for: timeout)
            return nil
        }
        let first = try await group.next()!
        group.cancelAll()
        return first
    }
    await consumer.close()
    guard let result else {
        throw TestTimeout(what: "records on \(topic) (\(read.count.withLock { $0 }) read in \(timeout))")
    }
    return result
}

/// How many records a reader has read so far.
private final class ReadCount: Sendable {
    let count = Mutex(0)
}

/// Commands read back from `notify.commands` (or another topic).
func readCommands(
    from broker: EmbeddedBroker, topic: String = Topic.commands, timeout: Duration = .seconds(60),
    until condition: @escaping @Sendable ([NotificationCommand]) -> Bool
) async throws -> [NotificationCommand] {
    let decoded = DecodedCommands()
    let records = try await readTopic(topic, from: broker, timeout: timeout) { records in
        condition(decoded.extended(to: records))
    }
    return records.map { try! JSONDecoder().decode(NotificationCommand.self, from: Data($0.value)) }
}

/// The commands decoded from what a reader has read so far, each record decoded once: decoded
/// again at every batch, a burst's 12,000 commands cost more (debug-built) than the pipeline's work.
private final class DecodedCommands: Sendable {
    private let state = Mutex((read: 0, commands: [NotificationCommand]()))

    /// The commands of `records` (whose first records are those seen before), the undecodable left out.
    func extended(to records: [KafkaRecord]) -> [NotificationCommand] {
        state.withLock { state in
            for record in records[state.read...] {
                if let command = try? JSONDecoder().decode(NotificationCommand.self, from: Data(record.value)) {
                    state.commands.append(command)
                }
            }
            state.read = records.count
            return state.commands
        }
    }
}

/// Every record of `notify.dlq` up to its current end.
func deadLetters(in broker: EmbeddedBroker) async throws -> [KafkaRecord] {
    try await readToEnd(Topic.dlq, from: broker)
}

/// `error`, with what `notify.dlq` holds when it is a timeout (and what `pipeline` counted, if it
/// is given): a burst whose commands do not all come has not been worked off yet, had records
/// dead-lettered (by reason, counted), or has a stage that stopped.
func explained(_ error: any Error, in broker: EmbeddedBroker, pipeline: PipelineTally? = nil) async -> any Error {
    guard var timeout = error as? TestTimeout else { return error }
    if let pipeline { timeout = TestTimeout(what: "\(timeout.what); the pipeline's \(pipeline.summary)") }
    guard let letters = try? await deadLetters(in: broker) else { return timeout }
    let reasons = Dictionary(grouping: letters) { letter in
        // The reason without the record's own names ("message wm12: unknown conversation group-3 …").
        (letter.headers.string(for: DeadLetterHeader.reason) ?? "no reason")
            .split(separator: " ").filter { !$0.contains(where: \.isNumber) }.joined(separator: " ")
    }
    let summary = reasons.map { "\($0.value.count) × \($0.key)" }.sorted().joined(separator: "; ")
    let held = letters.isEmpty ? "nothing" : "\(letters.count): \(summary)"
    return TestTimeout(what: "\(timeout.what); \(Topic.dlq) holds \(held)")
}

/// Produces the smallest scenario that makes a command (Alice writes Bob, who has a phone), and
/// waits for that command.
func produceOneCommand(to broker: EmbeddedBroker) async throws {
    try await produce(
        [
            Scenario.identity("alice", "Alice", at: 0), Scenario.identity("bob", "Bob", at: 0),
            Scenario.conversation("c", members: ["alice", "bob"]), Scenario.phone("bob"),
            Scenario.message("m1", in: "c", from: "alice", "hi", at: 1),
        ], to: broker)
    _ = try await readCommands(from: broker) { $0.count >= 1 }
}

struct TestTimeout: Error, CustomStringConvertible {
    let what: String
    var description: String { "timed out waiting for \(what)" }
}

/// A pipeline instance running in this process until stopped.
final class RunningPipeline: Sendable {
    let pipeline: PipelineInstance
    private let task: Task<Void, any Error>

    init(
        _ broker: EmbeddedBroker, configuration: CoreConfiguration, group: String = "notify-tests",
        thumbnails: ThumbnailSettings? = nil, observer: PipelineObserver = .init(), logger: Logger = testLogger,
        adjusting adjust: (inout PipelineSettings) -> Void = { _ in }
    ) {
        var settings = PipelineSettings(
            client: client(broker), groupId: group, core: configuration, thumbnails: thumbnails)
        adjust(&settings)
        pipeline = PipelineInstance(settings: settings, observer: observer, logger: logger)
        let pipeline = pipeline
        task = Task { try await pipeline.run() }
    }

    /// Waits until the pipeline says it is ready.
    func ready(timeout: Duration = .seconds(60)) async throws {
        let deadline = ContinuousClock.now + timeout
        while !pipeline.isReady {
            guard ContinuousClock.now < deadline else { throw TestTimeout(what: "the pipeline to be ready") }
            try await Task.sleep(for: .milliseconds(100))
        }
    }

    /// Stops it the way SIGTERM does: finish, commit, leave the group.
    func stop() async throws {
        task.cancel()
        try await task.value
    }

    /// A test that throws before ``stop()`` leaves no pipeline running into the next test.
    deinit {
        task.cancel()
    }
}

/// The commands as comparable lines: id and bytes.
func fingerprints(_ commands: [NotificationCommand]) -> [String] {
    commands.map { String(decoding: CoreJSON.encode($0), as: UTF8.self) }.sorted()
}

/// A command's fingerprint in a few words, for a failure message: message, device, path, badge.
func summary(_ fingerprint: String) -> String {
    guard let json = try? CoreJSON.parse(Array(fingerprint.utf8)) else { return fingerprint }
    let badge = json["content"]?["badge"].map { "\($0)" } ?? "-"
    return
        "\(json["messageId"]?.stringValue ?? "badge") to \(json["recipient"]?["deviceId"]?.stringValue ?? "?") \(json["path"]?.stringValue ?? "") badge \(badge)"
}

/// How far a pipeline has read each input partition, from its observer: a test waits on it
/// instead of sleeping.
final class ReadPositions: Sendable {
    private let next = Mutex<[TopicPartition: Int64]>([:])

    /// The observer to give the pipeline.
    var observer: PipelineObserver {
        PipelineObserver(onConsumed: { records in
            self.next.withLock { next in
                for record in records {
                    next[record.topicPartition] = max(next[record.topicPartition] ?? 0, record.offset + 1)
                }
            }
        })
    }

    /// Waits until the pipeline has read every record `topics` hold now (their high watermarks).
    func waitUntilRead(_ topics: [String], on broker: EmbeddedBroker, timeout: Duration = .seconds(60)) async throws {
        let ends = try await highWatermarks(of: topics, on: broker)
        let deadline = ContinuousClock.now + timeout
        while !next.withLock({ next in ends.allSatisfy { $0.value == 0 || (next[$0.key] ?? 0) >= $0.value } }) {
            guard ContinuousClock.now < deadline else { throw TestTimeout(what: "the pipeline to read \(topics)") }
            try await Task.sleep(for: .milliseconds(20))
        }
    }
}

/// The high watermark (next offset) of every partition of `topics`.
func highWatermarks(of topics: [String], on broker: EmbeddedBroker) async throws -> [TopicPartition: Int64] {
    let admin = try KafkaAdmin(configuration: client(broker), logger: testLogger)
    var ends: [TopicPartition: Int64] = [:]
    for topic in topics {
        let partitions = try #require(try await admin.metadata(of: topic)).partitionCount
        for partition in 0..<Int32(partitions) {
            let place = TopicPartition(topic: topic, partition: partition)
            ends[place] = try await admin.watermarks(place).high
        }
    }
    return ends
}

/// The group's committed offsets of `partitions` (nil: none), asked without joining the group.
func committedOffsets(of group: String, _ partitions: [TopicPartition], on broker: EmbeddedBroker) async throws
    -> [TopicPartition: Int64?]
{
    let consumer = try KafkaConsumer(configuration: .init(client: client(broker), groupId: group), logger: testLogger)
    let offsets = try await consumer.committed(partitions)
    await consumer.close()
    return offsets
}

/// Waits until `group` has committed each partition of `offsets` up to at least its offset: what
/// came before was processed and its outputs acknowledged.
func waitForCommit(
    of group: String, reaching offsets: [TopicPartition: Int64], on broker: EmbeddedBroker,
    timeout: Duration = .seconds(60)
) async throws {
    let deadline = ContinuousClock.now + timeout
    while true {
        let committed = try await committedOffsets(of: group, Array(offsets.keys), on: broker)
        if offsets.allSatisfy({ $0.value == 0 || ((committed[$0.key] ?? nil) ?? -1) >= $0.value }) { return }
        guard ContinuousClock.now < deadline else { throw TestTimeout(what: "\(group) to commit \(offsets)") }
        try await Task.sleep(for: .milliseconds(100))
    }
}
