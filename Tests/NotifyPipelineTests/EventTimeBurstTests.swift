import Foundation
import NotifyCore
import NotifyKafka
import Testing

@testable import NotifyPipeline

/// A backlog produced in one burst comes out of the live pipeline, and out of `notify replay`, with
/// the bytes `notify render` gives (issue 22): stage 2 folds in event-time order, not in the order
/// the stage-1 tasks happened to run.
@Suite(.serialized) struct EventTimeBurstTests {
    /// 1,000 messages in 200 group conversations of 300 users, 10 ms apart, in one burst, through one
    /// instance at ``testMachineLateness`` (as the process tests); then `notify replay` of the same topics.
    @Test func burstThroughOneInstanceAndItsReplayGiveRendersBytes() async throws {
        let configuration = try testCoreConfiguration()
        let world = GroupChats(users: 300, conversations: 200)
        let events = world.setup() + world.messages(0..<1_000)
        let expected = try rendered(events, configuration: configuration)
        #expect(expected.count >= 2_000)
        try await withPipelineBroker { broker in
            let tally = PipelineTally()
            let pipeline = RunningPipeline(broker, configuration: configuration, observer: tally.observer) {
                $0.lateness = testMachineLateness
            }
            try await pipeline.ready()
            try await produceBurst(events, to: broker)
            do {
                _ = try await readCommands(from: broker, timeout: .seconds(120)) { $0.count >= expected.count }
            } catch {
                throw await explained(error, in: broker, pipeline: tally)
            }
            try await waitUntilCommitted(group: "notify-tests", broker: broker)
            let live = try await readCommands(from: broker) { $0.count >= expected.count }
            try await pipeline.stop()
            #expect(live.count == expected.count, "\(live.count) commands for render's \(expected.count)")
            let replayed = try await replayedCommands(from: broker, configuration: configuration)
            #expect(replayed.count == expected.count)
            // Once, in a serial run of the process suites right after the crash runs (2026-11-25), dozens of
            // fanout records came out of event-time order; since quiet inputs settle on the clock of the
            // lateness ago, every run has passed (seven made alone or after the crash runs, besides the
            // full test runs), and the test asserts it.
            try checkAgainstReference(live, expected: expected)
            checkEventTimeOrder(live, times: try messageTimes(events))
            #expect(
                fingerprints(replayed) == fingerprints(live),
                "the replay differs from the live run in \(Set(fingerprints(replayed)).symmetricDifference(fingerprints(live)).count) commands"
            )
        }
    }

    /// 6,000 messages (issue 22's figure) in one burst through three `notify pipeline` processes; one
    /// is killed with SIGKILL once 1,500 messages have their commands, and another started while the
    /// backlog is worked off. (It ran 2,000 until the commands read back were decoded once each:
    /// decoded again at every batch, 6,000 took 354 s here, and 142 s since.) notify.commands has 12
    /// partitions here. Its 12,000 commands are about 15 MB, up to 4.1 MB a partition at 4, and the
    /// embedded broker keeps about 5 MB of each. In CI on 2026-12-05, at 4, every device's commands
    /// read back began near wm4,400, although 1,500 messages had their commands before the kill: the
    /// reader starts at what the broker still holds, and one pass fits, so only commands written
    /// again after the kill can have pushed the first ones out. How many is not known; the test now
    /// says what was dropped and how many commands it read.
    @Test func burstThroughThreeProcessesWithACrashGivesRendersBytes() async throws {
        let configuration = try testCoreConfiguration()
        let world = GroupChats(users: 300, conversations: 200)
        let messages = world.messages(0..<6_000)
        let events = world.setup() + messages
        let expected = try rendered(events, configuration: configuration)
        let started = ContinuousClock.now
        try await withPipelineBroker(unequal: [Topic.commands: 12]) { broker in
            let group = "burst-process-tests"
            let arguments = settingArguments(configuration)
            let logs = try ProcessLogs()
            defer { logs.remove() }
            let instances = try (0..<3).map { index in
                try PipelineProcess(
                    broker: broker, group: group, arguments: arguments, log: logs.path(for: "process-\(index)"))
            }
            defer { for instance in instances { instance.kill() } }
            try await produceBurst(events, to: broker)
            _ = try await readCommands(from: broker, timeout: .seconds(180)) {
                Set($0.compactMap(\.messageId)).count >= 1_500
            }
            await instances[0].stop(with: SIGKILL)
            logs.note("process-0 killed with SIGKILL; added starting")
            let added = try PipelineProcess(
                broker: broker, group: group, arguments: arguments, log: logs.path(for: "added"))
            defer { added.kill() }
            do {
                _ = try await readCommands(from: broker, timeout: .seconds(240)) {
                    Set($0.compactMap(\.messageId)).count >= messages.count
                }
            } catch {
                throw await explained(error, in: broker)
            }
            try await waitUntilCommitted(group: group, broker: broker)
            let live: [NotificationCommand]
            do {
                live = try await readCommandsToEnd(from: broker)
            } catch let timeout as TestTimeout {
                // Once, in a full run on 2026-11-24, fewer commands than render's had come a minute after
                // both groups had committed the ends of their streams (cause not found). Recorded, and
                // what came is compared below.
                withKnownIssue(
                    "a burst through three processes with a kill once lost commands (issue 22)", isIntermittent: true
                ) {
                    Issue.record(timeout)
                }
                live = try await readCommandsToEnd(from: broker)
            }
            for instance in instances.dropFirst() + [added] { await instance.stop(with: SIGTERM) }
            let held = try await checkBrokerKeptWhatIsReadWhole(in: broker)
            print(
                "\(messages.count)-message burst: \(live.count) commands read for render's \(expected.count); \(held)")
            _ = checkRepeatsAreIdentical(live)
            // In 2 of 5 runs on 2026-11-24, 3,561 and 3,044 of 4,000 commands differed from render; in three
            // runs of a later evening every sender went out unresolved (the tasks were not told of
            // chat.identities before the follower's first batch, and a task assigned after it started
            // from the identities as loaded). Both fixed on 2026-11-25; every run since has passed (20
            // alone or in the process suites, besides the full runs), and the test asserts it.
            if try !checkAgainstReference(live, expected: expected) {
                logs.printMoves(of: "\(messages.count)-message burst")
            }
            checkEventTimeOrder(live, times: try messageTimes(events))
        }
        print(
            "\(messages.count)-message burst through 3 processes (one killed, one added): \(ContinuousClock.now - started)"
        )
    }
}
