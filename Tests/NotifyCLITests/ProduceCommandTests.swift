import Foundation
import Logging
import NotifyKafka
import Testing

@Suite struct ProduceCommandTests {
    /// A bad line is reported with its number and not sent; the good ones are sent, keyed by conversation.
    @Test func badLinesAreReportedByNumberAndGoodOnesSent() async throws {
        try await EmbeddedBroker.withBroker(logger: Logger(label: "test")) { broker in
            try await broker.createTopic("chat.messages", partitions: 2)
            let good =
                #"{"type":"message.received","id":"e1","at":"2026-11-22T09:00:00Z","messageId":"m1","conversationId":"c1","senderId":"alice","kind":"text","text":"hi"}"#
            let bad =
                #"{"type":"message.received","id":"e2","at":"2026-11-22T09:00:01Z","conversationId":"c1","senderId":"alice","kind":"text"}"#
            let alsoGood = good.replacingOccurrences(of: "\"e1\"", with: "\"e3\"").replacingOccurrences(
                of: "\"m1\"", with: "\"m3\"")
            let produce = try NotifyProcess([
                "produce", "--bootstrap", broker.bootstrapServers, "--topic", "chat.messages", "--schemas", "Schemas",
            ])
            defer { produce.kill() }
            try produce.send([good, bad, "not json", alsoGood].joined(separator: "\n") + "\n")
            #expect(try await produce.exitStatus() == 1)
            let output = produce.output
            #expect(output.contains { $0.hasPrefix("line 2:") && $0.contains("messageId") })
            #expect(output.contains { $0.hasPrefix("line 3:") })
            #expect(!output.contains { $0.hasPrefix("line 1:") || $0.hasPrefix("line 4:") })

            // Every record the topic holds (the process has exited: what it sent is there), so a bad
            // line sent in a later batch would be seen.
            let received = try await allRecords(of: "chat.messages", on: broker)
            #expect(received.count == 2)
            #expect(received.allSatisfy { $0.key == Array("c1".utf8) })
            #expect(Set(received.map { String(decoding: $0.value, as: UTF8.self) }) == [good, alsoGood])
        }
    }

    /// Every wrong field of a line is reported, each unknown one with the nearest allowed name.
    @Test func everyWrongFieldIsReportedWithTheNearestName() async throws {
        try await EmbeddedBroker.withBroker(logger: Logger(label: "test")) { broker in
            try await broker.createTopic("chat.messages", partitions: 1)
            let typos =
                #"{"type":"message.received","id":"e1","at":"2026-11-22T09:00:00Z","mesageId":"m1","conversationId":"c1","senderId":"alice","kind":"text","txt":"hi"}"#
            let produce = try NotifyProcess([
                "produce", "--bootstrap", broker.bootstrapServers, "--topic", "chat.messages", "--schemas", "Schemas",
            ])
            defer { produce.kill() }
            try produce.send(typos + "\n")
            #expect(try await produce.exitStatus() == 1)
            #expect(
                produce.output.contains(
                    #"line 1: chat.messages: field "mesageId": unknown field, did you mean "messageId"? · field "txt": unknown field, did you mean "text"? · field "messageId": missing (not sent)"#
                ),
                "\(produce.output)")
        }
    }
}

/// Every record `topic` holds now: each partition read from its start to its high watermark, within `timeout`.
private func allRecords(
    of topic: String, on broker: EmbeddedBroker, timeout: Duration = .seconds(30)
) async throws -> [KafkaRecord] {
    let client = KafkaClientConfiguration(bootstrapServers: broker.bootstrapServers)
    let admin = try KafkaAdmin(configuration: client, logger: Logger(label: "test"))
    let partitions = try #require(try await admin.metadata(of: topic)).partitionCount
    var expected: Int64 = 0
    var assignment: [TopicPartition: KafkaOffset] = [:]
    for partition in 0..<Int32(partitions) {
        let place = TopicPartition(topic: topic, partition: partition)
        expected += try await admin.watermarks(place).high
        assignment[place] = .beginning
    }
    guard expected > 0 else { return [] }
    let total = expected
    let consumer = try KafkaConsumer(
        configuration: .init(client: client, groupId: "check-\(UUID().uuidString)"), logger: Logger(label: "test"))
    try consumer.assign(assignment)
    let records = try await withThrowingTaskGroup(of: [KafkaRecord]?.self) { group in
        group.addTask {
            var records: [KafkaRecord] = []
            for try await batch in consumer.batches {
                records += batch
                if records.count >= total { break }
            }
            return records
        }
        group.addTask {
            try await Task.sleep(for: timeout)
            return nil
        }
        defer { group.cancelAll() }
        return try await group.next()!
    }
    await consumer.close()
    guard let records else { throw ProcessFailure("timed out reading the \(expected) records of \(topic)") }
    return records
}
