import Foundation
import Kafka
import Logging
import Testing

@Suite struct ProduceCommandTests {
    /// A bad line is reported with its number and not sent; the good ones are sent, keyed by conversation.
    @Test func badLinesAreReportedByNumberAndGoodOnesSent() async throws {
        try await EmbeddedBroker.withBroker(logger: Logger(label: "test")) { broker in
            try await broker.createTopic("chat.messages", partitions: 2)
            let good = #"{"type":"message.received","id":"e1","at":"2026-11-22T09:00:00Z","messageId":"m1","conversationId":"c1","senderId":"alice","kind":"text","text":"hi"}"#
            let bad = #"{"type":"message.received","id":"e2","at":"2026-11-22T09:00:01Z","conversationId":"c1","senderId":"alice","kind":"text"}"#
            let alsoGood = good.replacingOccurrences(of: "\"e1\"", with: "\"e3\"").replacingOccurrences(of: "\"m1\"", with: "\"m3\"")
            let produce = try NotifyProcess(["produce", "--bootstrap", broker.bootstrapServers, "--topic", "chat.messages", "--schemas", "Schemas"])
            defer { produce.kill() }
            try produce.send([good, bad, "not json", alsoGood].joined(separator: "\n") + "\n")
            #expect(try await produce.exitStatus() == 1)
            let output = produce.output
            #expect(output.contains { $0.hasPrefix("line 2:") && $0.contains("messageId") })
            #expect(output.contains { $0.hasPrefix("line 3:") })
            #expect(!output.contains { $0.hasPrefix("line 1:") || $0.hasPrefix("line 4:") })

            let consumer = try KafkaConsumer(
                configuration: .init(client: KafkaClientConfiguration(bootstrapServers: broker.bootstrapServers), groupId: "check"),
                logger: Logger(label: "test"))
            try consumer.subscribe(["chat.messages"])
            var received: [KafkaRecord] = []
            for try await batch in consumer.batches {
                received += batch
                if received.count >= 2 { break }
            }
            await consumer.close()
            #expect(received.count == 2)
            #expect(received.allSatisfy { $0.key == Array("c1".utf8) })
            #expect(Set(received.map { String(decoding: $0.value, as: UTF8.self) }) == [good, alsoGood])
        }
    }

    /// Every wrong field of a line is reported, each unknown one with the nearest allowed name.
    @Test func everyWrongFieldIsReportedWithTheNearestName() async throws {
        try await EmbeddedBroker.withBroker(logger: Logger(label: "test")) { broker in
            try await broker.createTopic("chat.messages", partitions: 1)
            let typos = #"{"type":"message.received","id":"e1","at":"2026-11-22T09:00:00Z","mesageId":"m1","conversationId":"c1","senderId":"alice","kind":"text","txt":"hi"}"#
            let produce = try NotifyProcess(["produce", "--bootstrap", broker.bootstrapServers, "--topic", "chat.messages", "--schemas", "Schemas"])
            defer { produce.kill() }
            try produce.send(typos + "\n")
            #expect(try await produce.exitStatus() == 1)
            #expect(produce.output.contains(
                #"line 1: chat.messages: field "mesageId": unknown field, did you mean "messageId"? · field "txt": unknown field, did you mean "text"? · field "messageId": missing (not sent)"#),
                "\(produce.output)")
        }
    }
}
