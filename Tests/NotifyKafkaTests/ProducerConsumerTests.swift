import Foundation
import NotifyKafka
import Testing

@Suite struct ProducerConsumerTests {
    @Test func roundTripKeepsKeysHeadersAndTimestamps() async throws {
        try await withEmbeddedBroker(topics: ["round-trip": 3]) { broker in
            let producer = try KafkaProducer(configuration: clientConfiguration(broker), logger: testLogger)
            let headers = [
                KafkaHeader(name: "trace", string: "abc"), KafkaHeader(name: "empty", value: []),
                KafkaHeader(name: "null", value: nil),
            ]
            var outgoing = record("round-trip", key: "conversation-1", value: "{\"hello\":1}", headers: headers)
            outgoing.timestampMilliseconds = 1_700_000_000_123
            let report = try await producer.send(outgoing)
            #expect(report.topic == "round-trip")
            #expect(report.offset == 0)
            await producer.close()

            let consumer = try KafkaConsumer(
                configuration: .init(client: clientConfiguration(broker), groupId: "round-trip"), logger: testLogger)
            try consumer.subscribe(["round-trip"])
            let received = try await collect(consumer, count: 1)
            await consumer.close()
            let first = try #require(received.first)
            #expect(first.keyString == "conversation-1")
            #expect(first.valueString == "{\"hello\":1}")
            #expect(first.partition == report.partition)
            #expect(first.headers == headers)
            #expect(first.timestampMilliseconds == 1_700_000_000_123)
        }
    }

    @Test func recordsOfOneKeyKeepTheirOrder() async throws {
        try await withEmbeddedBroker(topics: ["ordered": 8]) { broker in
            let producer = try KafkaProducer(configuration: clientConfiguration(broker), logger: testLogger)
            let keys = (0..<10).map { "key-\($0)" }
            let records = (0..<2_000).map { index in record("ordered", key: keys[index % keys.count], value: "\(index)")
            }
            let received = try await sendAndReadBack(records, of: "ordered", with: producer, from: broker)
            for key in keys {
                let values = received.filter { $0.keyString == key }.map { Int($0.valueString)! }
                #expect(values == values.sorted(), "order of \(key)")
                #expect(values.count == 200)
            }
        }
    }

    /// When librdkafka's own queue is full, a record is tried again until it fits: nothing is lost
    /// and one key's records keep their order. (Its queue holds 10 records here, the in-flight window
    /// 1,000, and the records linger 20 ms before they go.)
    @Test func aFullQueueDelaysRecordsWithoutLosingOrReorderingThem() async throws {
        try await withEmbeddedBroker(topics: ["full": 2]) { broker in
            let producer = try KafkaProducer(
                configuration: clientConfiguration(
                    broker, ["queue.buffering.max.messages": "10", "linger.ms": "20"]),
                settings: .init(inFlightLimit: 1_000), logger: testLogger)
            let records = (0..<300).map { record("full", key: "key-\($0 % 3)", value: "\($0)") }
            let received = try await sendAndReadBack(records, of: "full", with: producer, from: broker)
            for key in 0..<3 {
                let values = received.filter { $0.keyString == "key-\(key)" }.map { Int($0.valueString)! }
                #expect(values == Array(stride(from: key, to: 300, by: 3)), "order of key-\(key)")
            }
        }
    }

    @Test func storedOffsetsAreWhereTheGroupResumes() async throws {
        try await withEmbeddedBroker(topics: ["resume": 1]) { broker in
            let producer = try KafkaProducer(configuration: clientConfiguration(broker), logger: testLogger)
            _ = try await producer.send((0..<10).map { record("resume", key: "k", value: "\($0)") })
            await producer.close()

            let configuration = KafkaConsumerConfiguration(
                client: clientConfiguration(broker), groupId: "resume", maxBatchSize: 3)
            let first = try KafkaConsumer(configuration: configuration, logger: testLogger)
            try first.subscribe(["resume"])
            let firstRecords = try await collect(first, count: 3)
            // Only the first four records count as processed; the rest must come again.
            try await first.commit([TopicPartition(topic: "resume", partition: 0): 4])
            await first.close()
            #expect(firstRecords.count >= 3)

            let second = try KafkaConsumer(configuration: configuration, logger: testLogger)
            try second.subscribe(["resume"])
            let secondRecords = try await collect(second, count: 6)
            let committed = try await second.committed([TopicPartition(topic: "resume", partition: 0)])
            await second.close()
            #expect(secondRecords.map(\.valueString) == (4..<10).map(String.init))
            #expect(committed[TopicPartition(topic: "resume", partition: 0)] == 4)
        }
    }

    @Test func recordsAreAlsoReadOneByOne() async throws {
        try await withEmbeddedBroker(topics: ["one-by-one": 1]) { broker in
            let producer = try KafkaProducer(configuration: clientConfiguration(broker), logger: testLogger)
            _ = try await producer.send((0..<5).map { record("one-by-one", key: "k", value: "\($0)") })
            await producer.close()
            let consumer = try KafkaConsumer(
                configuration: .init(client: clientConfiguration(broker), groupId: "one-by-one", maxBatchSize: 2),
                logger: testLogger)
            try consumer.subscribe(["one-by-one"])
            var values: [String] = []
            for try await record in consumer.records {
                values.append(record.valueString)
                if values.count == 5 { break }
            }
            await consumer.close()
            #expect(values == ["0", "1", "2", "3", "4"])
        }
    }

    @Test func seekMovesTheReadPosition() async throws {
        try await withEmbeddedBroker(topics: ["seek": 1]) { broker in
            let producer = try KafkaProducer(configuration: clientConfiguration(broker), logger: testLogger)
            _ = try await producer.send((0..<5).map { record("seek", key: "k", value: "\($0)") })
            await producer.close()
            let consumer = try KafkaConsumer(
                configuration: .init(client: clientConfiguration(broker), groupId: "seek"), logger: testLogger)
            let partition = TopicPartition(topic: "seek", partition: 0)
            try consumer.assign([partition: .offset(3)])
            let fromThree = try await collect(consumer, count: 2)
            #expect(fromThree.map(\.valueString) == ["3", "4"])
            try await consumer.seek(partition, to: .beginning)
            let fromStart = try await collect(consumer, count: 5)
            #expect(fromStart.map(\.valueString) == ["0", "1", "2", "3", "4"])
            await consumer.close()
        }
    }
}

/// Sends `records` of `topic` with `producer` (closed afterwards), every one acknowledged, then reads
/// them all back in a consumer group named after the topic.
private func sendAndReadBack(
    _ records: [OutgoingRecord], of topic: String, with producer: KafkaProducer, from broker: EmbeddedBroker
) async throws -> [KafkaRecord] {
    let reports = try await producer.send(records)
    #expect(reports.count == records.count)
    await producer.close()
    let consumer = try KafkaConsumer(
        configuration: .init(client: clientConfiguration(broker), groupId: topic), logger: testLogger)
    try consumer.subscribe([topic])
    let received = try await collect(consumer, count: records.count)
    await consumer.close()
    #expect(received.count == records.count)
    return received
}
