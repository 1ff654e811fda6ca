import Foundation
import NotifyCore
import NotifyKafka
import Testing

@testable import NotifyPipeline

@Suite(.serialized) struct RestoreTests {
    /// A new instance restores a task's changelog before it processes the task's first record: a
    /// message already waiting in Kafka when the instance starts carries the badge one higher than
    /// before the restart, not one.
    @Test func aTaskRestoresItsChangelogBeforeItsFirstRecord() async throws {
        let configuration = try testCoreConfiguration()
        try await withPipelineBroker { broker in
            try await produce(
                Scenario.aliceAndBob + [
                    Scenario.message("m1", in: "c1", from: "alice", "one", at: 1),
                    Scenario.message("m2", in: "c1", from: "alice", "two", at: 2),
                ], to: broker)
            let first = RunningPipeline(broker, configuration: configuration)
            try await first.ready()
            let before = try await readCommands(from: broker) { $0.count >= 2 }
            try await first.stop()
            #expect(before.map { $0.content["badge"] } == [.int(1), .int(2)])

            // In Kafka before the next instance is assigned its partitions: its first record.
            try await produce([Scenario.message("m3", in: "c1", from: "alice", "three", at: 3)], to: broker)
            let second = RunningPipeline(broker, configuration: configuration)
            try await second.ready()
            let after = try await readCommands(from: broker) { $0.count >= 3 }
            // A later message: once its command is out, anything processed twice would be out too.
            try await produce([Scenario.message("m4", in: "c1", from: "alice", "four", at: 4)], to: broker)
            let settled = try await readCommands(from: broker) { $0.contains { $0.messageId == "m4" } }
            try await second.stop()
            #expect(after.last?.messageId == "m3")
            #expect(after.last?.content["badge"] == .int(3))
            #expect(settled.map(\.messageId) == ["m1", "m2", "m3", "m4"], "nothing processed twice")
            #expect(settled.last?.content["badge"] == .int(4))
        }
    }
}
