import Foundation
import Kafka
import NotifyCore
import Testing
@testable import NotifyPipeline

/// What a stage's group commits, and what an instance makes of records read again after a crash.
@Suite(.serialized) struct CommittedOffsetTests {
    /// A message waiting for its sender's identity holds the commit of its partition at its offset
    /// while later records of the partition go out and are committed; once it is released, the
    /// commit moves on.
    @Test func offsetsAreNeverCommittedPastAHeldMessage() async throws {
        var configuration = try testCoreConfiguration()
        configuration.identityWaitMilliseconds = 600_000  // Carol's message waits until her identity comes.
        let messages = TopicPartition(topic: Topic.messages, partition: 0)
        let conversations = TopicPartition(topic: Topic.conversations, partition: 0)
        let group = "notify-tests.fanout"
        try await withPipelineBroker(partitions: 1) { broker in
            let positions = ReadPositions()
            let pipeline = RunningPipeline(broker, configuration: configuration, observer: positions.observer) {
                $0.saveInterval = .milliseconds(200)
            }
            try await pipeline.ready()
            try await produce([
                Scenario.identity("alice", "Alice", at: 0), Scenario.identity("bob", "Bob", at: 0),
                Scenario.conversation("with-alice", members: ["alice", "bob"]),
                Scenario.conversation("with-carol", members: ["carol", "bob"]), Scenario.phone("bob"),
            ], to: broker)
            try await positions.waitUntilRead([Topic.conversations, Topic.devices], on: broker)
            // Carol's message (offset 0) waits for her identity; Alice's (offsets 1 and 2) go out.
            try await produce([
                Scenario.message("c1", in: "with-carol", from: "carol", "carol 1", at: 1),
                Scenario.message("a1", in: "with-alice", from: "alice", "alice 1", at: 1.1),
                Scenario.message("a2", in: "with-alice", from: "alice", "alice 2", at: 1.2),
            ], to: broker)
            let alices = try await readCommands(from: broker) { $0.count >= 2 }
            // A later table record: once its offset is committed, a save after Alice's messages is.
            try await produce([Scenario.conversation("later", members: ["alice", "bob"], at: 2)], to: broker)
            try await waitForCommit(of: group, reaching: [conversations: 3], on: broker)
            let whileHeld = try await committedOffsets(of: group, [messages], on: broker)[messages] ?? nil

            try await produce([Scenario.identity("carol", "Carol", at: 3)], to: broker)
            let all = try await readCommands(from: broker) { $0.count >= 3 }
            try await waitForCommit(of: group, reaching: [messages: 3], on: broker)
            try await pipeline.stop()

            #expect(alices.map(\.messageId) == ["a1", "a2"])
            #expect(whileHeld == nil || whileHeld == 0,
                    "committed past Carol's waiting message: \(String(describing: whileHeld))")
            #expect(all.map(\.messageId) == ["a1", "a2", "c1"])
        }
    }
}
