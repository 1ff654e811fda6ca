import Foundation
import NotifyCore
import NotifyKafka
import NotifyRecords
import Synchronization
import Testing

@testable import NotifyPipeline

@Suite(.serialized) struct DeadLetterSizeTests {
    /// A poison record larger than notify.dlq takes is dead-lettered cut to fit, with its reason,
    /// source and key and a header giving its size, and the messages after it on its partition
    /// still go out. The embedded broker has no size limit and cannot describe topic configs, so
    /// the producer's `message.max.bytes` (100,000 bytes) stands in for the topic's `max.message.bytes`.
    @Test func poisonRecordOverTheDeadLetterLimitIsTruncatedAndThePartitionMovesOn() async throws {
        let configuration = try testCoreConfiguration()
        try await withPipelineBroker { broker in
            var settings = PipelineSettings(client: client(broker), groupId: "dead-letter-size", core: configuration)
            settings.client.properties["message.max.bytes"] = "100000"
            let pipeline = PipelineInstance(settings: settings, logger: testLogger)
            let running = Task { try await pipeline.run() }
            defer { running.cancel() }
            let deadline = ContinuousClock.now + .seconds(60)
            while !pipeline.isReady, ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(100)) }
            try #require(pipeline.isReady)

            try await produce(Scenario.aliceAndBob, to: broker)
            let key = Array("c1".utf8)
            let poison = Array(("{not json " + String(repeating: "x", count: 300_000)).utf8)
            try await produceRaw([OutgoingRecord(topic: Topic.messages, key: key, value: poison)], to: broker)
            try await produce([Scenario.message("m1", in: "c1", from: "alice", "after the poison", at: 2)], to: broker)

            let commands = try await readCommands(from: broker) { $0.contains { $0.messageId == "m1" } }
            #expect(commands.contains { $0.messageId == "m1" }, "the partition moved on past the poison record")
            let letters = try await readTopic(Topic.dlq, from: broker) { !$0.isEmpty }
            running.cancel()
            try await running.value

            let letter = try #require(letters.first)
            #expect(letters.count == 1)
            #expect(letter.key == key)
            #expect(letter.headers.string(for: DeadLetterHeader.reason)?.contains("invalid JSON") == true)
            #expect(letter.headers.string(for: DeadLetterHeader.sourceTopic) == Topic.messages)
            #expect(letter.headers.string(for: DeadLetterHeader.sourceOffset) != nil)
            #expect(letter.headers.string(for: DeadLetterHeader.truncated) == String(poison.count))
            #expect(letter.value.count > 99_000 && letter.value.count < 100_000, "\(letter.value.count) bytes kept")
            #expect(Array(poison.prefix(letter.value.count)) == letter.value, "the value's beginning, unchanged")
        }
    }

    /// The cut keeps the record within the limit, key and headers included, and leaves a record
    /// that fits alone.
    @Test func recordFittingKeepsEverythingButTheValuesTail() {
        let record = KafkaRecord(
            topic: Topic.messages, partition: 2, offset: 7, key: Array("k".utf8),
            value: Array(repeating: 65, count: 5_000))
        let whole = DeadLetter(record, reason: "bad").record(fitting: 10_000)
        #expect(whole.value.count == 5_000)
        #expect(whole.headers.allSatisfy { $0.name != DeadLetterHeader.truncated })
        let cut = DeadLetter(record, reason: "bad").record(fitting: 1_000)
        let size =
            (cut.key?.count ?? 0) + cut.value.count
            + cut.headers.reduce(0) { $0 + $1.name.utf8.count + ($1.value?.count ?? 0) }
        #expect(size <= 1_000)
        #expect(cut.value.count > 500)
        #expect(cut.headers.first { $0.name == DeadLetterHeader.truncated }?.value == Array("5000".utf8))
        #expect(cut.headers.first { $0.name == DeadLetterHeader.sourceOffset }?.value == Array("7".utf8))
        let bare = DeadLetter(record, reason: "bad").record(fitting: 0)
        #expect(bare.value.isEmpty && bare.key == Array("k".utf8))
    }

    /// The broker refuses dead-letter writes (MESSAGE_TOO_LARGE, which librdkafka does not retry):
    /// refused twice, the third attempt goes out without the value and is written; refused three
    /// times, the letter is given up and counted, and the write returns instead of throwing.
    @Test func refusedDeadLetterWritesAreRetriedThenGivenUpAndCounted() async throws {
        try await withPipelineBroker(partitions: 1) { broker in
            let producer = try KafkaProducer(configuration: client(broker), logger: testLogger)
            let lost = Mutex<[DeadLetter]>([])
            let writer = DeadLetterWriter(
                limit: DeadLetterLimit(bytes: 100_000), producer: producer,
                observer: PipelineObserver(onDeadLetterLost: { letter in lost.withLock { $0.append(letter) } }),
                logger: testLogger)
            let letter = DeadLetter(
                KafkaRecord(
                    topic: Topic.messages, partition: 0, offset: 3, key: Array("c1".utf8), value: Array("{bad".utf8)),
                reason: "invalid JSON")
            let tooLarge: Int32 = 10
            _ = try await producer.send(OutgoingRecord(topic: Topic.dlq, key: nil, value: Array("warm-up".utf8)))

            broker.pushRequestErrors(apiKey: KafkaAPIKey.produce, errors: [tooLarge, tooLarge])
            let bare = await writer.write([letter])
            #expect(bare.letters.count == 1)
            #expect(
                bare.records.first?.value.isEmpty == true, "the last attempt keeps the reason and source, not the value"
            )
            #expect(bare.records.first?.headers.string(for: DeadLetterHeader.sourceOffset) == "3")
            #expect(lost.withLock { $0.isEmpty })

            broker.pushRequestErrors(apiKey: KafkaAPIKey.produce, errors: [tooLarge, tooLarge, tooLarge])
            let none = await writer.write([letter])
            #expect(none.letters.isEmpty)
            #expect(lost.withLock { $0.map(\.sourceOffset) } == [3])
            await producer.close()
        }
    }
}
