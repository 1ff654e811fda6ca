import NotifyCore
import Synchronization
import Testing

@testable import NotifyPipeline

/// Each stage says how long its actor worked (`notify_stage_busy_seconds_total`): one actor per
/// stage, so the time it reports is some of the wall-clock time the pipeline ran, never more.
@Suite(.serialized) struct StageBusyTests {
    @Test func eachStageReportsTheTimeItsActorWorked() async throws {
        let busy = Mutex<[StageName: Duration]>([:])
        let observer = PipelineObserver(onBusy: { stage, duration in
            busy.withLock { $0[stage, default: .zero] += duration }
        })
        try await withPipelineBroker(partitions: 2) { broker in
            let started = ContinuousClock.now
            let pipeline = RunningPipeline(broker, configuration: try testCoreConfiguration(), observer: observer)
            try await pipeline.ready()
            try await produce(
                [
                    Scenario.identity("alice", "Alice", at: 0), Scenario.identity("bob", "Bob", at: 0),
                    Scenario.conversation("c1", members: ["alice", "bob"]), Scenario.phone("bob"),
                ], to: broker)
            try await produce(
                (1...20).map { Scenario.message("m\($0)", in: "c1", from: "alice", "hello \($0)", at: Double($0)) },
                to: broker)
            let commands = try await readCommands(from: broker) { $0.count >= 20 }
            try await pipeline.stop()
            let ran = ContinuousClock.now - started

            #expect(commands.count == 20)
            let reported = busy.withLock { $0 }
            for stage in [StageName.fanout, .route] {
                let worked = try #require(reported[stage], "\(stage.rawValue) reported no work")
                #expect(worked > .zero)
                #expect(worked <= ran, "\(stage.rawValue) worked \(worked) in a run of \(ran)")
            }
        }
    }

    /// An idle stage (nothing waiting, nothing read for a second and the lateness) works only for its
    /// mark sends through Kafka, every 20 ms, and its ticks: not for the local marks every 5 ms and the
    /// release check while nothing waits, which made an idle pipeline compute every task's marks 200
    /// times a second per stage. Counted through the work each stage reports (one report per turn).
    @Test func anIdleStageWorksOnlyForItsMarkSends() async throws {
        let turns = Mutex<[StageName: Int]>([:])
        let observer = PipelineObserver(onBusy: { stage, _ in turns.withLock { $0[stage, default: 0] += 1 } })
        try await withPipelineBroker(partitions: 2) { broker in
            let pipeline = RunningPipeline(broker, configuration: try testCoreConfiguration(), observer: observer)
            try await pipeline.ready()
            try await produceOneCommand(to: broker)
            // Idle from a second and the lateness after the last work on.
            try await Task.sleep(for: .seconds(2))
            let before = turns.withLock { $0 }
            let started = ContinuousClock.now
            try await Task.sleep(for: .seconds(2))
            let after = turns.withLock { $0 }
            let elapsed = (ContinuousClock.now - started) / .seconds(1)
            try await pipeline.stop()

            for stage in [StageName.fanout, .route] {
                let perSecond = Double((after[stage] ?? 0) - (before[stage] ?? 0)) / elapsed
                // 50 sends and 4 ticks a second at most; 200 and more before.
                #expect(perSecond <= 100, "the idle \(stage.rawValue) stage worked \(perSecond) times a second")
            }
        }
    }
}
