import NotifyCore
import NotifyKafka
import NotifyRecords
import Synchronization
import Testing

@testable import NotifyPipeline

@Suite struct IdentityTableTests {
    /// The follower says where chat.identities stands without waiting for a record, so the tasks
    /// (which count its partitions as lagging until it speaks) stop waiting on a quiet topic; and a
    /// record produced later is handed over, after which it says again that all is read.
    @Test func theFollowerSaysWhereItStandsAlsoWhenNoRecordComes() async throws {
        try await withPipelineBroker(partitions: 2) { broker in
            let producer = try KafkaProducer(configuration: client(broker), logger: testLogger)
            let (table, positions) = try await loadedTable(broker, producer: producer)
            let reports = Mutex<[(records: [KafkaRecord], lagging: [Int32: Bool])]>([])
            let follower = Task {
                try await table.follow(from: positions, reportInterval: .milliseconds(50)) { records, lagging in
                    reports.withLock { $0.append((records, lagging)) }
                }
            }
            defer { follower.cancel() }
            let allRead: [Int32: Bool] = [0: false, 1: false]
            try await waitFor("the follower to say the empty topic is read") {
                reports.withLock { $0.last?.lagging == allRead }
            }

            _ = try await producer.send(try outgoingRecord(Scenario.identity("carol", "Carol", at: 0)))
            try await waitFor("the identity to be handed over, then all read") {
                reports.withLock { reports in
                    guard let handed = reports.firstIndex(where: { !$0.records.isEmpty }) else { return false }
                    return reports[handed...].contains { $0.lagging == allRead }
                }
            }
            let handed = reports.withLock { $0.flatMap(\.records) }
            #expect(handed.map(\.key) == [Array("carol".utf8)])
            follower.cancel()
            _ = await follower.result
            await producer.close()
        }
    }

    /// The follower says the topic is read as soon as its consumer knows the partitions' ends, not
    /// one report interval after it started: the tasks hold every message until then. Here the
    /// interval is an hour, so only the reports made until the ends are known can say it.
    @Test func theFollowerSaysTheTopicIsReadWithoutWaitingForItsReportInterval() async throws {
        try await withPipelineBroker(partitions: 2) { broker in
            let producer = try KafkaProducer(configuration: client(broker), logger: testLogger)
            _ = try await producer.send(try outgoingRecord(Scenario.identity("carol", "Carol", at: 0)))
            let (table, positions) = try await loadedTable(broker, producer: producer)
            let reports = Mutex<[[Int32: Bool]]>([])
            let follower = Task {
                try await table.follow(from: positions, reportInterval: .seconds(3_600)) { _, lagging in
                    reports.withLock { $0.append(lagging) }
                }
            }
            defer { follower.cancel() }
            try await waitFor("the follower to say the topic is read") {
                reports.withLock { $0.last == [0: false, 1: false] }
            }
            // Then it says it once an interval, like before: no report is made every 2 ms for good.
            let made = reports.withLock { $0.count }
            try await Task.sleep(for: .milliseconds(200))
            #expect(reports.withLock { $0.count } == made)
            follower.cancel()
            _ = await follower.result
            await producer.close()
        }
    }

    /// While its consumer cannot reach a broker (so the ends stay unknown), the follower keeps saying
    /// every partition lags, and says it less and less often: every task hears each report, and at a
    /// report every 2 ms a broker out of reach at the start kept the stage busy for nothing.
    @Test func theFollowerBacksOffWhileTheBrokerIsOutOfReach() async throws {
        try await withPipelineBroker(partitions: 2) { broker in
            let producer = try KafkaProducer(configuration: client(broker), logger: testLogger)
            let (loaded, positions) = try await loadedTable(broker, producer: producer)
            // Nothing listens on port 1: the follower's consumer never learns the ends.
            let unreachable = KafkaClientConfiguration(bootstrapServers: "127.0.0.1:1", clientId: "notify-test")
            let table = IdentityTable(
                client: unreachable, admin: loaded.admin, limits: RecordLimits(), deadLetters: loaded.deadLetters,
                logger: testLogger)
            let reports = Mutex<[[Int32: Bool]]>([])
            let follower = Task {
                try await table.follow(from: positions, reportInterval: .seconds(3_600)) { _, lagging in
                    reports.withLock { $0.append(lagging) }
                }
            }
            defer { follower.cancel() }
            try await Task.sleep(for: .seconds(1))
            let made = reports.withLock { $0 }
            // At 0, 2, 6, 14, …, 510 ms: nine reports in the first second (463 at a fixed 2 ms).
            #expect((2...12).contains(made.count), "\(made.count) reports in one second")
            #expect(made.allSatisfy { $0 == [0: true, 1: true] })
            follower.cancel()
            _ = await follower.result
            await producer.close()
        }
    }

    /// A task that comes to an instance after identities were heard knows them: here the partitions
    /// of an instance that stops go to one that loaded chat.identities while it was empty, and the
    /// messages of their conversations still go out with their sender resolved. (A task started
    /// from the directory as loaded sent every such message with the fallback.)
    @Test func aTaskAssignedAfterIdentitiesWereHeardKnowsThem() async throws {
        let configuration = try testCoreConfiguration()
        let conversations = (0..<12).map { "handover-\($0)" }
        func messages(at second: Double) -> [ScenarioEvent] {
            conversations.map { Scenario.message("\($0)@\(second)", in: $0, from: "carol", "hi", at: second) }
        }
        try await withPipelineBroker { broker in
            let first = RunningPipeline(broker, configuration: configuration, group: "handover")
            try await first.ready()
            let second = RunningPipeline(broker, configuration: configuration, group: "handover")
            try await second.ready()
            try await produce(
                [Scenario.identity("carol", "Carol", at: 0), Scenario.phone("bob")]
                    + conversations.map { Scenario.conversation($0, members: ["carol", "bob"]) }, to: broker)
            // Both instances hold their tasks and hear Carol's identity before these go out.
            try await produce(messages(at: 1), to: broker)
            let before = try await readCommands(from: broker) { $0.count >= conversations.count }
            try await second.stop()
            try await produce(messages(at: 2), to: broker)
            let all = try await readCommands(from: broker) { $0.count >= 2 * conversations.count }
            try await first.stop()
            #expect(before.count == conversations.count)
            #expect(all.count == 2 * conversations.count)
            let unresolved = all.filter { $0.content["sender"]?["displayName"] != .string("Carol") }.compactMap(
                \.messageId)
            #expect(unresolved.isEmpty, "sent with the fallback: \(unresolved.sorted())")
        }
    }

    /// chat.identities of `broker`, loaded as an instance loads it at its start, and where to follow from.
    private func loadedTable(_ broker: EmbeddedBroker, producer: KafkaProducer) async throws -> (
        IdentityTable, [TopicPartition: Int64]
    ) {
        let admin = try KafkaAdmin(configuration: client(broker), logger: testLogger)
        let deadLetters = DeadLetterWriter(
            limit: DeadLetterLimit(bytes: 100_000), producer: producer, observer: PipelineObserver(),
            logger: testLogger)
        let table = IdentityTable(
            client: client(broker), admin: admin, limits: RecordLimits(), deadLetters: deadLetters,
            logger: testLogger)
        let (_, positions) = try await table.load(into: FanoutStage(configuration: try testCoreConfiguration()))
        return (table, positions)
    }

    private func waitFor(_ what: String, timeout: Duration = .seconds(30), _ condition: () -> Bool) async throws {
        let deadline = ContinuousClock.now + timeout
        while !condition() {
            guard ContinuousClock.now < deadline else { throw TestTimeout(what: what) }
            try await Task.sleep(for: .milliseconds(20))
        }
    }
}
