import Foundation
import NotifyCore
import NotifyKafka
import NotifySinks
import Testing

/// The topics the sinks use, on a fresh embedded broker for `body`.
func withSinkTopics<T>(_ body: (EmbeddedBroker) async throws -> T) async throws -> T {
    try await EmbeddedBroker.withBroker(logger: testLogger) { broker in
        try await broker.createTopic("notify.commands", partitions: 4)
        try await broker.createTopic("notify.outcomes", partitions: 4)
        try await broker.createTopic("notify.dlq", partitions: 1)
        return try await body(broker)
    }
}

func kafkaConfiguration(_ broker: EmbeddedBroker) -> KafkaClientConfiguration {
    KafkaClientConfiguration(bootstrapServers: broker.bootstrapServers, clientId: "notify-sinks-tests")
}

/// Writes `commands` (and any `raw` values) to notify.commands, keyed by user id.
func produceCommands(
    _ commands: [NotificationCommand], raw: [(key: String, value: String)] = [], to broker: EmbeddedBroker
) async throws {
    let producer = try KafkaProducer(configuration: kafkaConfiguration(broker), logger: testLogger)
    var records = commands.map {
        OutgoingRecord(topic: "notify.commands", key: Array($0.recipient.userId.utf8), value: json($0))
    }
    records += raw.map {
        OutgoingRecord(topic: "notify.commands", key: Array($0.key.utf8), value: Array($0.value.utf8))
    }
    _ = try await producer.send(records)
    await producer.close()
}

/// Writes outcomes to notify.outcomes, as an earlier sink instance would have.
func produceOutcomes(_ outcomes: [NotificationOutcome], to broker: EmbeddedBroker) async throws {
    let producer = try KafkaProducer(configuration: kafkaConfiguration(broker), logger: testLogger)
    let encoder = JSONEncoder()
    _ = try await producer.send(
        outcomes.map {
            OutgoingRecord(
                topic: "notify.outcomes", key: Array($0.recipient.userId.utf8), value: Array(try! encoder.encode($0)))
        })
    await producer.close()
}

/// Every record of `topic` written so far (reads each partition up to its high watermark).
func readTopic(_ topic: String, on broker: EmbeddedBroker) async throws -> [KafkaRecord] {
    let admin = try KafkaAdmin(configuration: kafkaConfiguration(broker), logger: testLogger)
    let partitions = Int32(try await admin.metadata(of: topic)?.partitionCount ?? 0)
    var highs: [Int32: Int64] = [:]
    for partition in 0..<partitions {
        highs[partition] = try await admin.watermarks(TopicPartition(topic: topic, partition: partition)).high
    }
    let expected = highs.values.reduce(0, +)
    guard expected > 0 else { return [] }
    let consumer = try KafkaConsumer(
        configuration: KafkaConsumerConfiguration(
            client: kafkaConfiguration(broker), groupId: "reader-\(UUID().uuidString)"),
        logger: testLogger)
    var assignment: [TopicPartition: KafkaOffset] = [:]
    for partition in 0..<partitions { assignment[TopicPartition(topic: topic, partition: partition)] = .beginning }
    try consumer.assign(assignment)
    var records: [KafkaRecord] = []
    for try await batch in consumer.batches {
        records += batch
        if records.count >= expected { break }
    }
    await consumer.close()
    return records
}

/// Waits until `group` has committed every record notify.commands holds now: each command was
/// handled and its outcome acknowledged, so a repeated request of any would have come already.
func waitUntilEveryCommandIsCommitted(by group: String, on broker: EmbeddedBroker, timeout: Duration = .seconds(60))
    async throws
{
    let admin = try KafkaAdmin(configuration: kafkaConfiguration(broker), logger: testLogger)
    var ends: [TopicPartition: Int64] = [:]
    for partition in 0..<Int32(try await admin.metadata(of: "notify.commands")?.partitionCount ?? 0) {
        let place = TopicPartition(topic: "notify.commands", partition: partition)
        ends[place] = try await admin.watermarks(place).high
    }
    let reader = try KafkaConsumer(
        configuration: KafkaConsumerConfiguration(client: kafkaConfiguration(broker), groupId: group),
        logger: testLogger)
    do {
        try await waitUntil(timeout: timeout) {
            let committed = try await reader.committed(Array(ends.keys))
            return ends.allSatisfy { $0.value == 0 || (committed[$0.key] ?? nil) == $0.value }
        }
    } catch {
        await reader.close()
        throw error
    }
    await reader.close()
}

/// The results on notify.outcomes, decoded (without the `attempting` records written before each first attempt).
func readOutcomes(on broker: EmbeddedBroker) async throws -> [NotificationOutcome] {
    try await readOutcomeRecords(on: broker).filter { $0.outcome != .attempting }
}

/// Every record on notify.outcomes, `attempting` ones included, decoded.
func readOutcomeRecords(on broker: EmbeddedBroker) async throws -> [NotificationOutcome] {
    try await readTopic("notify.outcomes", on: broker).map {
        try JSONDecoder().decode(NotificationOutcome.self, from: Data($0.value))
    }
}

/// Polls `condition` until it holds or `timeout` passes; returns whether it held.
func eventually(timeout: Duration = .seconds(30), _ condition: () async throws -> Bool) async throws -> Bool {
    let deadline = ContinuousClock.now + timeout
    while ContinuousClock.now < deadline {
        if try await condition() { return true }
        try await Task.sleep(for: .milliseconds(50))
    }
    return try await condition()
}

/// Waits for `condition`; records an issue if it does not come true within `timeout`.
func waitUntil(
    timeout: Duration = .seconds(30), sourceLocation: SourceLocation = #_sourceLocation,
    _ condition: () async throws -> Bool
) async throws {
    if try await !eventually(timeout: timeout, condition) {
        Issue.record("timed out waiting", sourceLocation: sourceLocation)
    }
}

/// Runs `runtime` while `body` runs, then stops it gracefully and waits for it, also on failure.
func withRunningSink<T: Sendable>(_ runtime: SinkRuntime, _ body: () async throws -> T) async throws -> T {
    try await withThrowingTaskGroup(of: Void.self) { group in
        group.addTask { try await runtime.run() }
        do {
            let result = try await body()
            runtime.stop()
            try await group.waitForAll()
            return result
        } catch {
            runtime.stop()
            try? await group.waitForAll()
            throw error
        }
    }
}

func sinkRuntime(
    _ sink: any NotificationSink, broker: EmbeddedBroker,
    retry: RetryPolicy = RetryPolicy(initialDelay: .milliseconds(50))
)
    -> SinkRuntime
{
    SinkRuntime(
        sink: sink, configuration: SinkRuntimeConfiguration(kafka: kafkaConfiguration(broker), retry: retry),
        logger: testLogger)
}

extension KafkaRecord {
    func header(_ name: String) -> String? {
        headers.first { $0.name == name }?.value.map { String(decoding: $0, as: UTF8.self) }
    }
}
