import Foundation
import NotifyCore
import NotifyKafka
import NotifyRecords
import Testing

@testable import NotifyPipeline

@Suite(.serialized) struct BadInputTests {
    /// Malformed JSON, schema violations, unknown types, oversized records and messages of unknown
    /// conversations land in notify.dlq with their reasons and sources; good records keep flowing.
    @Test func poisonRecordsGoToTheDeadLetterTopicWhileTheRestFlows() async throws {
        let configuration = try testCoreConfiguration()
        try await withPipelineBroker { broker in
            let pipeline = RunningPipeline(broker, configuration: configuration)
            try await pipeline.ready()
            try await produce(Scenario.aliceAndBob, to: broker)
            let key = Array("c1".utf8)
            let oversized = Array(
                Scenario.message("big", in: "c1", from: "alice", String(repeating: "x", count: 1_100_000), at: 1).json
                    .utf8)
            try await produceRaw(
                [
                    OutgoingRecord(topic: Topic.messages, key: key, value: Array("{not json".utf8)),
                    OutgoingRecord(
                        topic: Topic.messages, key: key,
                        value: Array(#"{"type":"message.received","id":"x","at":"2026-11-22T09:00:01Z"}"#.utf8)),
                    OutgoingRecord(
                        topic: Topic.messages, key: key,
                        value: Array(#"{"type":"message.deleted","id":"x","at":"2026-11-22T09:00:01Z"}"#.utf8)),
                    OutgoingRecord(topic: Topic.messages, key: key, value: oversized),
                    OutgoingRecord(
                        topic: Topic.messages, key: Array("nowhere".utf8),
                        value: Array(Scenario.message("lost", in: "nowhere", from: "alice", "hi", at: 1).json.utf8)),
                ], to: broker)
            try await produce([Scenario.message("m1", in: "c1", from: "alice", "still flowing", at: 2)], to: broker)

            let commands = try await readCommands(from: broker) { $0.contains { $0.messageId == "m1" } }
            #expect(commands.map(\.messageId) == ["m1"])
            let letters = try await readTopic(Topic.dlq, from: broker) { $0.count >= 5 }
            try await pipeline.stop()

            let reasons = letters.map { $0.headers.string(for: DeadLetterHeader.reason) ?? "" }
            #expect(letters.count == 5)
            #expect(letters.allSatisfy { $0.headers.string(for: DeadLetterHeader.sourceTopic) == Topic.messages })
            #expect(letters.allSatisfy { $0.headers.string(for: DeadLetterHeader.sourceOffset) != nil })
            #expect(reasons.contains { $0.contains("invalid JSON") })
            #expect(reasons.contains { $0.contains("messageId") })
            #expect(reasons.contains { $0.contains("message.deleted") })
            #expect(reasons.contains { $0.contains("over the limit") })
            #expect(reasons.contains { $0.contains("nowhere") })
            // The original key and value are kept.
            #expect(letters.contains { $0.value == Array("{not json".utf8) && $0.key == key })
        }
    }
}
