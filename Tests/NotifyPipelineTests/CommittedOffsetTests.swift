import Foundation
import NotifyCore
import NotifyKafka
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
            try await produce(
                [
                    Scenario.identity("alice", "Alice", at: 0), Scenario.identity("bob", "Bob", at: 0),
                    Scenario.conversation("with-alice", members: ["alice", "bob"]),
                    Scenario.conversation("with-carol", members: ["carol", "bob"]), Scenario.phone("bob"),
                ], to: broker)
            try await positions.waitUntilRead([Topic.conversations, Topic.devices], on: broker)
            // Carol's message (offset 0) waits for her identity; Alice's (offsets 1 and 2) go out.
            try await produce(
                [
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
            #expect(
                whileHeld == nil || whileHeld == 0,
                "committed past Carol's waiting message: \(String(describing: whileHeld))")
            #expect(all.map(\.messageId) == ["a1", "a2", "c1"])
        }
    }

    /// After a crash between a save's changelog and its offset commit, an instance reads input again
    /// that the restored state holds already: the offsets in the changelog make it skip those records.
    /// (40 messages in one conversation: more than the 32 event ids each key remembers.)
    @Test func recordsReadAgainAfterACrashAreSkippedByTheChangelogsOffsets() async throws {
        let configuration = try testCoreConfiguration()
        let messages = TopicPartition(topic: Topic.messages, partition: 0)
        try await withPipelineBroker(partitions: 1) { broker in
            try await produce(
                Scenario.aliceAndBob
                    + (1...40).map {
                        Scenario.message("m\($0)", in: "c1", from: "alice", "message \($0)", at: Double($0))
                    }, to: broker)
            let first = RunningPipeline(broker, configuration: configuration)
            try await first.ready()
            let before = try await readTopic(Topic.fanout, from: broker) { $0.count >= 40 }
            try await first.stop()
            #expect(before.count == 40)

            // The crash: the changelog was written, the input offsets not committed.
            try await rewind("notify-tests.fanout", to: [messages: 0], on: broker)

            let second = RunningPipeline(broker, configuration: configuration)
            try await second.ready()
            // A later message: once its fanout record is out, the 40 read again were processed.
            try await produce([Scenario.message("m41", in: "c1", from: "alice", "later", at: 41)], to: broker)
            let after = try await readTopic(Topic.fanout, from: broker) { records in
                records.contains { (try? CoreJSON.parse($0.value))?["messageId"]?.stringValue == "m41" }
            }
            try await second.stop()
            let ids = after.map { (try? CoreJSON.parse($0.value))?["messageId"]?.stringValue }
            #expect(ids.count == 41, "\(ids.count - 41) fanout records written again")
            #expect(Set(ids).count == ids.count)
        }
    }

    /// Commits `offsets` for `group` as one of its members (the broker takes commits from members
    /// only), then leaves it: as if its last owner had stopped before committing anything since.
    func rewind(_ group: String, to offsets: [TopicPartition: Int64], on broker: EmbeddedBroker) async throws {
        let member = try KafkaConsumer(configuration: .init(client: client(broker), groupId: group), logger: testLogger)
        do {
            try member.subscribe(Array(Set(offsets.keys.map(\.topic))))
            let deadline = ContinuousClock.now + .seconds(60)
            while try !member.assignment().isSuperset(of: offsets.keys) {
                guard ContinuousClock.now < deadline else {
                    throw TestTimeout(what: "\(group) to assign \(offsets.keys)")
                }
                try await Task.sleep(for: .milliseconds(50))
            }
            try await member.commit(offsets)
        } catch {
            await member.close()
            throw error
        }
        await member.close()
    }
}
