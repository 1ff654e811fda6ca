import Foundation
import NotifyCore
import NotifyKafka
import Testing

@testable import NotifyPipeline

@Suite(.serialized) struct LiveRenderEquivalenceTests {
    /// The demo scenario through the live pipeline gives byte-identical commands to `notify render`,
    /// and a replay of the topics gives them again.
    @Test func liveRenderAndReplayAgree() async throws {
        let configuration = try testCoreConfiguration()
        let events = try scenarioEvents("Schemas/examples/scenarios/demo.json")
        let expected = try rendered(events, configuration: configuration)
        #expect(expected.count > 5)
        try await withPipelineBroker { broker in
            let pipeline = RunningPipeline(broker, configuration: configuration)
            try await pipeline.ready()
            // Spaced as in `notify dev`, the scenario this test is about; the same comparison under a
            // burst is EventTimeBurstTests'.
            try await produce(events, to: broker, spacing: .milliseconds(100))
            let live = try await readCommands(from: broker) { $0.count >= expected.count }
            // Both stages commit past every input there is: whatever they were to make is out.
            let stageOneInputs = [Topic.messages, Topic.conversations]
            let stageTwoInputs = [Topic.fanout, Topic.devices, Topic.preferences, Topic.clientState, Topic.reads]
            let stageOneEnds = try await highWatermarks(of: stageOneInputs, on: broker)
            try await waitForCommit(of: "notify-tests.fanout", reaching: stageOneEnds, on: broker)
            let stageTwoEnds = try await highWatermarks(of: stageTwoInputs, on: broker)
            try await waitForCommit(of: "notify-tests.route", reaching: stageTwoEnds, on: broker)
            let settled = try await readCommands(from: broker) { $0.count >= expected.count }
            try await pipeline.stop()
            #expect(
                fingerprints(settled) == fingerprints(expected),
                "\(Set(fingerprints(settled)).subtracting(fingerprints(expected)).map(summary)) instead of \(Set(fingerprints(expected)).subtracting(fingerprints(settled)).map(summary))"
            )
            #expect(fingerprints(live) == fingerprints(expected))

            let replayed = try await replayedCommands(from: broker, configuration: configuration)
            #expect(replayed.count == expected.count)
            #expect(fingerprints(replayed) == fingerprints(settled))
        }
    }
}
