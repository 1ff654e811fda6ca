import Foundation
import NotifyKafka
import Testing

@Suite struct PauseResumeTests {
    /// A paused partition delivers nothing until it is resumed; the other partition keeps flowing.
    @Test func pausedPartitionWaitsWhileOthersFlow() async throws {
        try await withEmbeddedBroker(topics: ["paused": 2]) { broker in
            let consumer = try KafkaConsumer(
                configuration: .init(client: clientConfiguration(broker), groupId: "pause"), logger: testLogger)
            let first = TopicPartition(topic: "paused", partition: 0)
            let second = TopicPartition(topic: "paused", partition: 1)
            try consumer.assign([first: .beginning, second: .beginning])
            try consumer.pause([first])
            let producer = try KafkaProducer(configuration: clientConfiguration(broker), logger: testLogger)
            _ = try await producer.send(
                (0..<10).map {
                    OutgoingRecord(topic: "paused", key: nil, value: Array("\($0)".utf8), partition: Int32($0 % 2))
                })
            await producer.close()

            var whilePaused = try await collect(consumer, count: 5)
            // A later record of the flowing partition: once it is read, the consumer has fetched
            // past the paused partition's records (one fetch asks for every partition not paused).
            let marker = try KafkaProducer(configuration: clientConfiguration(broker), logger: testLogger)
            _ = try await marker.send(
                OutgoingRecord(topic: "paused", key: nil, value: Array("marker".utf8), partition: 1))
            await marker.close()
            while !whilePaused.contains(where: { $0.valueString == "marker" }) {
                whilePaused += try await collect(consumer, count: 1)
            }
            // Nothing of the paused partition came while it stayed paused.
            #expect(whilePaused.allSatisfy { $0.partition == 1 })
            #expect(whilePaused.map(\.valueString) == ["1", "3", "5", "7", "9", "marker"])
            try consumer.resume([first])
            let afterResume = try await collect(consumer, count: 5)
            #expect(afterResume.allSatisfy { $0.partition == 0 })
            #expect(afterResume.map(\.valueString) == ["0", "2", "4", "6", "8"])
            await consumer.close()
        }
    }
}
