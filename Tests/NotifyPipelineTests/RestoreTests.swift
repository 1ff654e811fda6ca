import Foundation
import Kafka
import NotifyCore
import Testing
@testable import NotifyPipeline

@Suite(.serialized) struct RestoreTests {
    /// A new instance restores the badges from the changelog: after a restart the next message
    /// carries the badge one higher, not one.
    @Test func badgesSurviveARestart() async throws {
        let configuration = try testCoreConfiguration()
        try await withPipelineBroker { broker in
            try await produce(Scenario.aliceAndBob + [
                Scenario.message("m1", in: "c1", from: "alice", "one", at: 1),
                Scenario.message("m2", in: "c1", from: "alice", "two", at: 2),
            ], to: broker)
            let first = RunningPipeline(broker, configuration: configuration)
            try await first.ready()
            let before = try await readCommands(from: broker) { $0.count >= 2 }
            try await first.stop()
            #expect(before.map { $0.content["badge"] } == [.int(1), .int(2)])

            let second = RunningPipeline(broker, configuration: configuration)
            try await second.ready()
            try await produce([Scenario.message("m3", in: "c1", from: "alice", "three", at: 3)], to: broker)
            let after = try await readCommands(from: broker) { $0.count >= 3 }
            try await Task.sleep(for: .seconds(1))
            let settled = try await readCommands(from: broker) { $0.count >= 3 }
            try await second.stop()
            #expect(after.last?.messageId == "m3")
            #expect(after.last?.content["badge"] == .int(3))
            // Nothing was processed twice.
            #expect(settled.count == 3)
        }
    }
}
