import Foundation
import Logging
import NotifyCore
import NotifyKafka
import NotifyRecords
import Testing

@testable import NotifyPipeline

/// A bad record of one input topic, and a word its dead letter's reason must contain.
private struct BadRecord {
    var topic: String
    var key: String?
    var value: String
    var problem: String

    var record: OutgoingRecord {
        OutgoingRecord(topic: topic, key: key.map { Array($0.utf8) }, value: Array(value.utf8))
    }
}

/// The dead letters of the record `report` says was written, by their source headers.
private func letters(of report: DeliveryReport, in letters: [KafkaRecord]) -> [KafkaRecord] {
    letters.filter {
        $0.headers.string(for: DeadLetterHeader.sourceTopic) == report.topic
            && $0.headers.string(for: DeadLetterHeader.sourcePartition) == String(report.partition)
            && $0.headers.string(for: DeadLetterHeader.sourceOffset) == String(report.offset)
    }
}

@Suite(.serialized) struct InputDeadLetterTests {
    /// One bad record of each table topic and side input, read live: each reaches notify.dlq once
    /// (a bad identity once, not once per stage-1 task) with its reason and source, and the good
    /// records after them (of the same keys) still make their commands.
    @Test func badRecordsOfEveryTableAndSideInputAreDeadLetteredOnce() async throws {
        let configuration = try testCoreConfiguration()
        try await withPipelineBroker { broker in
            let pipeline = RunningPipeline(broker, configuration: configuration)
            try await pipeline.ready()
            try await produce(Scenario.aliceAndBob, to: broker)
            let at = Scenario.at(1)
            let bad = [
                BadRecord(
                    topic: Topic.conversations, key: "c2", value: #"{"type":"conversation.updated","#,
                    problem: "invalid JSON"),
                BadRecord(
                    topic: Topic.identities, key: "carol",
                    value: #"{"type":"identity.renamed","id":"i-bad","at":"\#(at)","userId":"carol"}"#,
                    problem: "identity.renamed"),
                BadRecord(
                    topic: Topic.devices, key: "carol",
                    value: #"{"type":"devices.updated","id":"d-bad","at":"\#(at)","userId":"carol","devices":"none"}"#,
                    problem: #"field "devices""#),
                BadRecord(
                    topic: Topic.preferences, key: nil,
                    value:
                        #"{"type":"preferences.updated","id":"p-bad","at":"\#(at)","userId":"bob","previews":"never"}"#,
                    problem: "no key"),
                BadRecord(
                    topic: Topic.clientState, key: "bob",
                    value: #"{"type":"client.state","pad":"\#(String(repeating: "x", count: 1_100_000))"}"#,
                    problem: "over the limit"),
                BadRecord(
                    topic: Topic.reads, key: "bob",
                    value: #"{"type":"conversation.read","id":"r-bad","at":"\#(at)","userId":"bob"}"#,
                    problem: #"field "conversationId""#),
            ]
            let reports = try await produceRaw(bad.map(\.record), to: broker)
            try await produce(
                [
                    Scenario.identity("carol", "Carol", at: 1),
                    Scenario.conversation("c2", members: ["alice", "carol"], at: 1), Scenario.phone("carol", at: 1),
                    Scenario.message("m1", in: "c1", from: "alice", "after the bad ones", at: 2),
                    Scenario.message("m2", in: "c2", from: "alice", "to carol", at: 2),
                ], to: broker)

            let commands = try await readCommands(from: broker) {
                Set($0.map(\.messageId)).isSuperset(of: ["m1", "m2"])
            }
            _ = try await readTopic(Topic.dlq, from: broker) { $0.count >= bad.count }
            try await pipeline.stop()
            let dlq = try await deadLetters(in: broker)

            #expect(commands.contains { $0.messageId == "m1" && $0.recipient.userId == "bob" })
            #expect(commands.contains { $0.messageId == "m2" && $0.recipient.deviceId == "carol-phone" })
            #expect(dlq.count == bad.count, "\(dlq.map { $0.headers.string(for: DeadLetterHeader.reason) ?? "" })")
            for (record, report) in zip(bad, reports) {
                let found = letters(of: report, in: dlq)
                #expect(found.count == 1, "\(record.topic): \(found.count) dead letters")
                let reason = found.first?.headers.string(for: DeadLetterHeader.reason) ?? ""
                #expect(reason.contains(record.problem), "\(record.topic): \(reason)")
            }
        }
    }

    /// Bad table records already in their topics when a pipeline starts are found at the tasks'
    /// restore and dead-lettered once, also when a good record of the same key follows them; a
    /// second start after a clean stop does not repeat them, except those of chat.identities, which
    /// every start reads in full (docs/operations.md, "Dead letters").
    @Test func badTableRecordsFoundAtRestoreAreDeadLetteredOnceAcrossRestarts() async throws {
        let configuration = try testCoreConfiguration()
        try await withPipelineBroker { broker in
            try await produce(Scenario.aliceAndBob, to: broker)
            let at = Scenario.at(1)
            let bad = [
                BadRecord(
                    topic: Topic.conversations, key: "c2",
                    value:
                        #"{"type":"conversation.updated","id":"c-bad","at":"\#(at)","conversationId":"c2","kind":"triple","members":["alice","carol"]}"#,
                    problem: #"field "kind""#),
                BadRecord(
                    topic: Topic.identities, key: nil,
                    value:
                        #"{"type":"identity.updated","id":"i-bad","at":"\#(at)","userId":"carol","displayName":"C"}"#,
                    problem: "no key"),
                BadRecord(topic: Topic.devices, key: "carol", value: "{not json", problem: "invalid JSON"),
                BadRecord(
                    topic: Topic.preferences, key: "bob",
                    value: #"{"type":"preferences.deleted","id":"p-bad","at":"\#(at)","userId":"bob"}"#,
                    problem: "preferences.deleted"),
                BadRecord(
                    topic: Topic.clientState, key: nil,
                    value: #"{"type":"client.state","id":"s-bad","at":"\#(at)","userId":"bob"}"#,
                    problem: "no key"),
            ]
            let reports = try await produceRaw(bad.map(\.record), to: broker)
            // Good records of the same keys after the bad ones: the restore applies them first.
            try await produce(
                [Scenario.conversation("c2", members: ["alice", "carol"], at: 1), Scenario.phone("carol", at: 1)],
                to: broker)

            let first = RunningPipeline(broker, configuration: configuration)
            try await first.ready()
            try await produce([Scenario.message("m1", in: "c2", from: "alice", "to carol", at: 2)], to: broker)
            let before = try await readCommands(from: broker) { $0.contains { $0.messageId == "m1" } }
            _ = try await readTopic(Topic.dlq, from: broker) { $0.count >= bad.count }
            try await first.stop()
            let afterFirst = try await deadLetters(in: broker)

            let second = RunningPipeline(broker, configuration: configuration)
            try await second.ready()
            try await produce([Scenario.message("m2", in: "c1", from: "alice", "to bob", at: 3)], to: broker)
            let after = try await readCommands(from: broker) { $0.contains { $0.messageId == "m2" } }
            try await second.stop()
            let afterSecond = try await deadLetters(in: broker)

            #expect(before.contains { $0.messageId == "m1" && $0.recipient.deviceId == "carol-phone" })
            #expect(after.contains { $0.messageId == "m2" && $0.recipient.userId == "bob" })
            #expect(afterFirst.count == bad.count)
            for (record, report) in zip(bad, reports) {
                let once = letters(of: report, in: afterFirst)
                #expect(once.count == 1, "\(record.topic): \(once.count) dead letters after the first start")
                let reason = once.first?.headers.string(for: DeadLetterHeader.reason) ?? ""
                #expect(reason.contains(record.problem), "\(record.topic): \(reason)")
                let expected = record.topic == Topic.identities ? 2 : 1
                #expect(
                    letters(of: report, in: afterSecond).count == expected, "\(record.topic) after the second start")
            }
            #expect(afterSecond.count == bad.count + 1)
        }
    }
}
