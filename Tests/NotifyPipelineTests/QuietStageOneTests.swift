import Foundation
import NotifyCore
import NotifyKafka
import Synchronization
import Testing

@testable import NotifyPipeline

/// While stage 1 has read no record (a fresh system, or one where only devices, preferences and app
/// states have come so far), its tasks' marks say they have nothing to write, once: stage 2 folds its
/// own records within the lateness, and an idle instance writes no marks (issue 22).
@Suite(.serialized) struct QuietStageOneTests {
    /// One device registration, read by stage 2 of a pipeline whose stage 1 has read nothing, with
    /// the maximum wait at 60 s. Before, the instance clock of such a stage 1 started near
    /// `Int64.min` (it took the `.at(.min)` mark of a task whose inputs had not been read yet for a
    /// time), its idle marks said that time to stage 2 (in a `notify pipeline` process also as one
    /// record per `notify.fanout` partition every mark interval; in this one stage 2 hears them in
    /// memory, so the last check guards that cost without having caught it), and stage 2 held the
    /// registration for the whole maximum wait.
    @Test func stageTwoFoldsWithinTheLatenessWhileStageOneHasReadNothing() async throws {
        let configuration = try testCoreConfiguration()
        try await withPipelineBroker { broker in
            let folded = Mutex<[StageName: [Duration]]>([:])
            let forced = Mutex(0)
            let observer = PipelineObserver(
                onReleasedByMaximumWait: { _, count in forced.withLock { $0 += count } },
                onEventTimeWaits: { stage, waits in folded.withLock { $0[stage, default: []] += waits } })
            let pipeline = RunningPipeline(broker, configuration: configuration, observer: observer) {
                $0.maximumEventTimeWait = .seconds(60)
            }
            try await pipeline.ready()
            try await produce([Scenario.phone("bob", at: 1)], to: broker)
            let produced = ContinuousClock.now
            while folded.withLock({ $0[.route, default: []].isEmpty }), ContinuousClock.now - produced < .seconds(20) {
                try await Task.sleep(for: .milliseconds(50))
            }
            let waits = folded.withLock { $0[.route, default: []] }
            #expect(waits.count == 1, "stage 2 folded \(waits.count) records in 20 s")
            #expect(waits.allSatisfy { $0 < .seconds(5) }, "stage 2 held the registration \(waits)")
            #expect(forced.withLock { $0 } == 0)
            #expect(folded.withLock { $0[.fanout, default: []] }.isEmpty, "stage 1 read a record")

            // Idle, the instance writes no more marks: its stage-1 tasks' marks do not change.
            let before = try await highWatermarks(of: [Topic.fanout], on: broker)
            try await Task.sleep(for: .seconds(2))
            let after = try await highWatermarks(of: [Topic.fanout], on: broker)
            let written = after.values.reduce(0, +) - before.values.reduce(0, +)
            #expect(written == 0, "\(written) mark records in 2 s of quiet")
            try await pipeline.stop()
        }
    }
}
