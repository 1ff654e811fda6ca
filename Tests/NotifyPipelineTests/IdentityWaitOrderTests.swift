import Foundation
import NotifyCore
import NotifyKafka
import Testing

@testable import NotifyPipeline

@Suite(.serialized) struct IdentityWaitOrderTests {
    /// Carol's identity arrives late and Dave's never: their conversations wait (in order), Alice's
    /// flows meanwhile; Carol's messages come out resolved, Dave's fall back after the wait.
    @Test func conversationsWaitingForIdentitiesKeepOrderWithoutHoldingOthers() async throws {
        var configuration = try testCoreConfiguration()
        // Once input is quiet, the wall clock ends a wait: Carol's identity, produced once Alice's
        // messages are out, must be heard before that, also on a machine busy with other tests.
        configuration.identityWaitMilliseconds = 8_000
        try await withPipelineBroker(partitions: 1) { broker in
            let positions = ReadPositions()
            let pipeline = RunningPipeline(broker, configuration: configuration, observer: positions.observer)
            try await pipeline.ready()
            try await produce(
                [
                    Scenario.identity("alice", "Alice", at: 0), Scenario.identity("bob", "Bob", at: 0),
                    Scenario.conversation("with-alice", members: ["alice", "bob"]),
                    Scenario.conversation("with-carol", members: ["carol", "bob"]),
                    Scenario.conversation("with-dave", members: ["dave", "bob"]),
                    Scenario.phone("bob"),
                ], to: broker)
            // Conversations exist before their messages, as a chat backend publishes them.
            try await positions.waitUntilRead([Topic.conversations, Topic.devices], on: broker)
            try await produce(
                [
                    Scenario.message("c1", in: "with-carol", from: "carol", "carol 1", at: 1),
                    Scenario.message("a1", in: "with-alice", from: "alice", "alice 1", at: 1.1),
                    Scenario.message("c2", in: "with-carol", from: "carol", "carol 2", at: 1.2),
                    Scenario.message("d1", in: "with-dave", from: "dave", "dave 1", at: 1.3),
                    Scenario.message("a2", in: "with-alice", from: "alice", "alice 2", at: 1.4),
                    Scenario.message("d2", in: "with-dave", from: "dave", "dave 2", at: 1.5),
                    Scenario.message("a3", in: "with-alice", from: "alice", "alice 3", at: 1.6),
                ], to: broker)
            // Alice's conversation is not held by the others: her messages come out while Carol's
            // and Dave's wait. Carol's identity comes after that (within the wait); Dave's never.
            let alices = try await readCommands(from: broker) { $0.count >= 3 }
            try await produce([Scenario.identity("carol", "Carol", at: 2)], to: broker)
            let all = try await readCommands(from: broker) { $0.count >= 7 }
            try await pipeline.stop()
            #expect(alices.map { $0.messageId ?? "" } == ["a1", "a2", "a3"])

            let ids = all.map { $0.messageId ?? "" }
            #expect(ids.prefix(3) == ["a1", "a2", "a3"])
            #expect(Set(ids) == ["a1", "a2", "a3", "c1", "c2", "d1", "d2"])
            #expect(ids.filter { $0.hasPrefix("c") } == ["c1", "c2"])
            #expect(ids.filter { $0.hasPrefix("d") } == ["d1", "d2"])
            for command in all where command.messageId?.hasPrefix("c") == true {
                #expect(command.content["identityResolved"] == .bool(true))
                #expect(command.content["sender"]?["displayName"] == .string("Carol"))
            }
            for command in all where command.messageId?.hasPrefix("d") == true {
                #expect(command.content["identityResolved"] == .bool(false))
            }
        }
    }
}
