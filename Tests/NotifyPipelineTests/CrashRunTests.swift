import Foundation
import NotifyCore
import NotifyKafka
import Testing

@testable import NotifyPipeline

/// A crash in the middle of a live stream does not inflate badges (issue 22): the fanout records stage 1
/// writes again after the crash are recognised by stage 2, and no command id carries two byte strings.
@Suite(.serialized) struct CrashRunTests {
    /// Two instances; about 2,000 messages over 50 conversations of 128 users fed at about 100 a
    /// second; one instance killed with SIGKILL 8 s in, a third started. Run three times: the
    /// timing of the kill against the saves differs from run to run.
    @Test(arguments: 1...3)
    func crashMidStreamRepeatsOnlyIdenticalCommands(run: Int) async throws {
        let configuration = try testCoreConfiguration()
        let world = GroupChats(users: 128, conversations: 50)
        let messages = world.messages(0..<2_000)
        let expected = try rendered(world.setup() + messages, configuration: configuration)
        try await withPipelineBroker { broker in
            let group = "crash-run-\(run)"
            let arguments = settingArguments(configuration)
            let logs = try ProcessLogs()
            defer { logs.remove() }
            try await produce(world.setup(), to: broker)
            let first = try PipelineProcess(
                broker: broker, group: group, arguments: arguments, log: logs.path(for: "first"))
            let second = try PipelineProcess(
                broker: broker, group: group, arguments: arguments, log: logs.path(for: "second"))
            defer {
                first.kill()
                second.kill()
            }
            let feeding = Task { try await feed(messages, to: broker, perSecond: 100) }
            // 8 s of feeding is 800 messages; the kill comes once stage 2 has worked on them.
            _ = try await readCommands(from: broker, timeout: .seconds(120)) {
                Set($0.compactMap(\.messageId)).count >= 800
            }
            await first.stop(with: SIGKILL)
            logs.note("first killed with SIGKILL; third starting")
            let third = try PipelineProcess(
                broker: broker, group: group, arguments: arguments, log: logs.path(for: "third"))
            defer { third.kill() }
            let feedBehind = try await feeding.value
            let live: [NotificationCommand]
            var stalled = false
            do {
                _ = try await readCommands(from: broker, timeout: .seconds(180)) {
                    Set($0.compactMap(\.messageId)).count >= messages.count
                }
                try await waitUntilCommitted(group: group, broker: broker)
                live = try await readCommandsToEnd(from: broker)
            } catch let timeout as TestTimeout {
                // Twice in fifteen runs on 2026-11-24 commands near the stream's end did not come: once
                // none for three minutes (cause not found), once two, skipped after a takeover as
                // applied (fixed in 03f923d). Recorded, and what came is still compared below.
                withKnownIssue(
                    "a crash mid-stream sometimes loses the commands of the stream's end (issue 22)",
                    isIntermittent: true
                ) {
                    Issue.record(timeout)
                }
                stalled = true
                live = try await readCommandsToEnd(from: broker)
            }
            await second.stop(with: SIGTERM)
            await third.stop(with: SIGTERM)
            let held = try await checkBrokerKeptWhatIsReadWhole(in: broker)
            print("crash run \(run): \(live.count) commands read for render's \(expected.count); \(held)")
            // Seen once in six runs on 2026-11-24, with pipeline.lateness at 5 ms: one command id went out
            // twice with different bytes. Not seen in the 51 runs since (at the lateness the test sets).
            checkRepeatsAreIdentical(live)
            // The order is promised for records that reach Kafka within the lateness of those before
            // them. The feed's slices did until it was late itself (a producer per slice, each record
            // awaited in turn: 12.8 s behind in 20 s); then two messages 20 to 40 ms apart came out
            // swapped on one device in some runs, before the kill as well as after.
            var agreed = false
            if feedBehind < testMachineLateness && !stalled {
                agreed = try checkAgainstReference(live, expected: expected)
            } else {
                withKnownIssue(
                    "the feed ran \(feedBehind) behind its schedule (pipeline.lateness: \(testMachineLateness)), or the stream stalled",
                    isIntermittent: true
                ) {
                    agreed = try checkAgainstReference(live, expected: expected)
                }
            }
            // The CI run at ac23550 gave 207 commands another badge than render's around the takeover,
            // and could not say which partitions had moved where: a run that differs says it now.
            if !agreed { logs.printMoves(of: "crash run \(run)") }
        }
    }
}
