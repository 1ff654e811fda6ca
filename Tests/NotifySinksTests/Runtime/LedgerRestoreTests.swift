import Foundation
import NotifyCore
import NotifyKafka
import Testing

@testable import NotifySinks

/// The ledger's restore at start reads `notify.outcomes` from just before the oldest command the
/// sink's group can read again, not the whole topic; and the whole topic when it cannot tell.
@Suite(.serialized) struct LedgerRestoreTests {
    let now = Date()
    /// Outcomes of commands long settled, before the group's committed offsets.
    let settledOutcomes = 30_000

    func ago(_ seconds: TimeInterval) -> Date { now.addingTimeInterval(-seconds) }

    /// A `notify.commands` record of `command`, stamped with its event's time as the route stage stamps it.
    func commandRecord(_ command: NotificationCommand, partition: Int32) -> OutgoingRecord {
        OutgoingRecord(
            topic: "notify.commands", key: Array(command.recipient.userId.utf8), value: json(command),
            partition: partition,
            timestampMilliseconds: Int64(Timestamps.parse(command.at)!.timeIntervalSince1970 * 1000))
    }

    /// A jsonl sink's outcome of `commandId`, written at `at` (record timestamp and `at` alike).
    func outcomeRecord(_ commandId: String, _ kind: NotificationOutcome.Kind = .delivered, at: Date, partition: Int32)
        -> OutgoingRecord
    {
        let outcome = NotificationOutcome(
            id: "\(commandId):\(kind.rawValue)", at: Timestamps.format(at), commandId: commandId, sink: "jsonl",
            recipient: Recipient(userId: "u", deviceId: "d", platform: .ios, provider: .apns), conversationId: "c1",
            messageId: "m-\(commandId)", outcome: kind)
        return OutgoingRecord(
            topic: "notify.outcomes", key: Array("u".utf8), value: Array(try! JSONEncoder().encode(outcome)),
            partition: partition,
            timestampMilliseconds: Int64(at.timeIntervalSince1970 * 1000))
    }

    /// Per partition p of notify.commands (4): three settled commands, then `p<p>-done` (with an
    /// outcome) and `p<p>-new` (without), all of one device. Partition 0 stalled two days ago: its
    /// first command to read again, `p0-stalled`, has only an `attempting` record, two days old.
    /// notify.outcomes holds `settledOutcomes` three-day-old outcomes first, then the newer ones
    /// (none in its partition 3, which the restore then starts at its end).
    /// Returns the outcomes newer than the settled ones.
    func fill(_ broker: EmbeddedBroker) async throws -> Int {
        var commands: [OutgoingRecord] = []
        for partition in Int32(0)..<4 {
            func command(_ id: String, at: Date) -> OutgoingRecord {
                commandRecord(
                    makeCommand(id: id, userId: "u\(partition)", deviceId: "d\(partition)", at: at),
                    partition: partition)
            }
            commands += (0..<3).map { command("p\(partition)-settled-\($0)", at: ago(3 * 86_400)) }
            if partition == 0 { commands.append(command("p0-stalled", at: ago(2 * 86_400))) }
            let recent = partition == 0 ? ago(2 * 86_400) : ago(600)
            commands += [command("p\(partition)-done", at: recent), command("p\(partition)-new", at: recent)]
        }
        var outcomes = (0..<settledOutcomes).map {
            outcomeRecord("settled-\($0)", at: ago(3 * 86_400), partition: Int32($0 % 4))
        }
        let newer =
            [
                outcomeRecord("p0-stalled", .attempting, at: ago(2 * 86_400 - 60), partition: 2),
                outcomeRecord("p0-done", at: ago(2 * 86_400 - 120), partition: 2),
            ] + (1...3).map { outcomeRecord("p\($0)-done", at: ago(300), partition: Int32($0 - 1)) }
        outcomes += newer
        let producer = try KafkaProducer(configuration: kafkaConfiguration(broker), logger: testLogger)
        _ = try await producer.send(commands)
        _ = try await producer.send(outcomes)
        await producer.close()
        return newer.count
    }

    /// Commits offset 3 (after the settled commands) in every partition of notify.commands for the jsonl sinks' group.
    func commitAfterSettled(_ broker: EmbeddedBroker) async throws {
        let consumer = try KafkaConsumer(
            configuration: KafkaConsumerConfiguration(client: kafkaConfiguration(broker), groupId: "notify-sink-jsonl"),
            logger: testLogger)
        var offsets: [TopicPartition: Int64] = [:]
        for partition in Int32(0)..<4 { offsets[TopicPartition(topic: "notify.commands", partition: partition)] = 3 }
        try await consumer.commit(offsets)
        await consumer.close()
    }

    func restore(_ broker: EmbeddedBroker) async throws -> LedgerRestoreReport {
        try await SinkRuntime.restoreLedger(
            kind: "jsonl", configuration: SinkRuntimeConfiguration(kafka: kafkaConfiguration(broker)),
            logger: testLogger)
    }

    @Test func theRestoreReadsFromTheOldestCommandTheGroupReadsAgainAndStillDeliversNothingTwice() async throws {
        try await withSinkTopics { broker in
            let newer = try await fill(broker)
            try await commitAfterSettled(broker)

            let report = try await restore(broker)
            #expect(report.recordsRead == newer, "read \(report.recordsRead) records, from \(report.from)")
            #expect(report.from.contains("notify.commands[0]"), "\(report.from)")

            let out = try temporaryFile("delivered.jsonl")
            defer { try? FileManager.default.removeItem(atPath: out) }
            let expected: Set<String> = ["p0-stalled", "p0-new", "p1-new", "p2-new", "p3-new"]
            let runtime = SinkRuntime(
                sink: try JSONLSink(path: out),
                configuration: SinkRuntimeConfiguration(kafka: kafkaConfiguration(broker)),
                logger: testLogger)
            /// The ids of the commands the sink wrote to `out`, in order.
            func delivered() throws -> [String] {
                try String(contentsOfFile: out, encoding: .utf8).split(separator: "\n")
                    .map { try NotificationCommand(record: Array($0.utf8)).id }
            }
            // A device's commands go in order: once its `-new` one is out, its `-done` one was decided.
            try await withRunningSink(runtime) {
                try await waitUntil { Set(try delivered()).isSuperset(of: expected) }
            }
            #expect(
                try delivered().sorted() == expected.sorted(),
                "each command read again goes out once, and none with an outcome")
            let stalled = try await readOutcomes(on: broker).filter { $0.commandId == "p0-stalled" }
            #expect(
                stalled.map(\.reason) == ["replacement"],
                "the two-day-old attempt is known: the command replaces its copy")
        }
    }

    @Test func withoutCommittedOffsetsTheRestoreReadsTheWholeTopic() async throws {
        try await withSinkTopics { broker in
            let newer = try await fill(broker)
            let report = try await restore(broker)
            #expect(
                report.recordsRead == settledOutcomes + newer, "read \(report.recordsRead) records, from \(report.from)"
            )
            #expect(report.from.contains("no committed offset"), "\(report.from)")
        }
    }
}
