import NotifyCore
import NotifyKafka
import NotifyRecords
import Testing

@testable import NotifyPipeline

@Suite(.serialized) struct StageRunnerTests {
    /// A burst's first batch may bring the records of one task only, while the others' wait in the
    /// consumer, fetched and not handed over yet. Every task learns the batch's lag: the task with
    /// messages waiting tells stage 2 it has passed nothing (`.at(.min)`), where it used to take its
    /// input for read to its end and follow the instance's clock, which the first task's records
    /// had put ahead of its own (in CI, 2026-12-04, stage 2 then folded a burst's first records out
    /// of event-time order). Its mark is read back from the fence it writes to `notify.fanout`.
    @Test func aTaskWithoutRecordsInABatchIsToldTheBatchesLag() async throws {
        let configuration = try testCoreConfiguration()
        try await withPipelineBroker(partitions: 2) { broker in
            let admin = try KafkaAdmin(configuration: client(broker), logger: testLogger)
            let producer = try KafkaProducer(configuration: client(broker), logger: testLogger)
            let observer = PipelineObserver()
            let logic = FanoutStageLogic(stage: FanoutStage(configuration: configuration), identities: FanoutState())
            let runner = StageRunner(
                logic: logic, producer: producer,
                restorer: ChangelogRestorer(client: client(broker), admin: admin, logger: testLogger),
                observer: observer, limits: RecordLimits(),
                deadLetters: DeadLetterWriter(
                    limit: DeadLetterLimit(bytes: 1_000_000), producer: producer, observer: observer,
                    logger: testLogger),
                saveInterval: .seconds(60),
                merge: EventTimeMerge(
                    markedTopics: [Topic.fanoutRepartition: 2], lateness: 200, maximumWait: .seconds(30),
                    localMarks: LocalProgressBoard()),
                partitionCount: 2, markPartitions: 2, logger: testLogger)
            try await runner.assign([0, 1])
            try await runner.tick()  // No consumer, no lag known: every input counts as read to its end.
            // A conversation and its message in partition 0, read; partition 1's messages wait.
            let key = try #require(
                (0..<100).map { "c\($0)" }.first {
                    KafkaPartitioner.murmur2.partition(of: Array($0.utf8), partitionCount: 2) == 0
                })
            let events = [
                Scenario.conversation(key, members: ["alice", "bob"], at: 9),
                Scenario.message("m1", in: key, from: "alice", "hi", at: 10),
            ]
            let records = events.enumerated().map { offset, event in
                KafkaRecord(
                    topic: event.topic, partition: 0, offset: Int64(offset), key: Array(key.utf8),
                    value: Array(event.json.utf8))
            }
            var lag: [TopicPartition: Int64] = [:]
            for topic in logic.inputTopics {
                for partition: Int32 in 0...1 {
                    lag[TopicPartition(topic: topic, partition: partition)] =
                        topic == Topic.messages && partition == 1 ? 250 : 0
                }
            }
            try await runner.process(
                ConsumedRecord.decodingAhead(records, logic: logic, limits: RecordLimits()), lag: lag)
            try await runner.announceMarks()
            let fences = try await readTopic(Topic.fanout, from: broker, marks: true) { records in
                Set(
                    records.filter { $0.partition == 0 }.flatMap { PartitionTask<FanoutStageLogic>.marks(of: $0) }
                        .map(\.task)
                ).count == 2
            }
            let marks = Dictionary(
                fences.filter { $0.partition == 0 }.flatMap { PartitionTask<FanoutStageLogic>.marks(of: $0) },
                uniquingKeysWith: { first, _ in first })
            #expect(marks[1] == .at(.min), "the task whose messages wait: \(String(describing: marks[1]))")
            #expect(marks[0] != .at(.min), "the task that read its messages")
            await producer.close()
        }
    }
}
