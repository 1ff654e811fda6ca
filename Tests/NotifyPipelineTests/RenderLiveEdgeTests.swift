import Foundation
import NotifyCore
import NotifyKafka
import Synchronization
import Testing

@testable import NotifyPipeline

/// The cases where render and the live pipeline used to part (issue 22): the live pipeline gives
/// render's bytes, whatever the wall clock did meanwhile.
@Suite(.serialized) struct RenderLiveEdgeTests {
    /// When the later event reaches Kafka, after the earlier one.
    enum Arrival: String, CaseIterable, Sendable {
        /// Right behind it, by the same producer: the next record it sends once the earlier one is
        /// acknowledged (a few milliseconds, inside the default `pipeline.lateness` of 10 ms).
        case together
        /// Half a second later, by a producer of its own.
        case delayed
    }

    /// Runs `first`, then `later` as `arrival` says, through one in-process pipeline, and
    /// compares what comes out, once everything is committed, with render of all of it.
    func liveMatchesRender(
        _ first: [ScenarioEvent], then later: [ScenarioEvent], arrival: Arrival, configuration: CoreConfiguration,
        adjusting adjust: (inout PipelineSettings) -> Void = { _ in }
    ) async throws -> [NotificationCommand] {
        try await liveMatchesRender(configuration: configuration, adjusting: adjust) { broker in
            switch arrival {
            case .together:
                try await produce(first + later, to: broker)
            case .delayed:
                // Each call makes and closes a producer of its own (a close took 0.1 s here, ten
                // times the default lateness): `.together` is one producer's burst instead.
                try await produce(first, to: broker)
                try await Task.sleep(for: .milliseconds(500))  // The lateness under test, not a wait for a result.
                try await produce(later, to: broker)
            }
            return first + later
        }
    }

    /// Runs `feed` (which produces events and returns them) through one in-process pipeline, and
    /// compares what comes out, once everything is committed, with render of what it produced.
    func liveMatchesRender(
        configuration: CoreConfiguration, adjusting adjust: (inout PipelineSettings) -> Void = { _ in },
        feed: (EmbeddedBroker) async throws -> [ScenarioEvent]
    ) async throws -> [NotificationCommand] {
        try await withPipelineBroker { broker in
            let pipeline = RunningPipeline(broker, configuration: configuration, adjusting: adjust)
            try await pipeline.ready()
            let expected = try rendered(try await feed(broker), configuration: configuration)
            try await expectRendersCommands(expected, from: broker)
            try await pipeline.stop()
            return expected
        }
    }

    /// Reads the commands once the groups have committed everything, and expects render's: the same
    /// ids with the same bytes.
    func expectRendersCommands(_ expected: [NotificationCommand], from broker: EmbeddedBroker) async throws {
        _ = try await readCommands(from: broker) { $0.count >= expected.count }
        try await waitUntilCommitted(group: "notify-tests", broker: broker)
        let live = try await readCommands(from: broker) { $0.count >= expected.count }
        #expect(
            fingerprints(live) == fingerprints(expected),
            "\(Set(fingerprints(live)).subtracting(fingerprints(expected)).map(summary)) instead of \(Set(fingerprints(expected)).subtracting(fingerprints(live)).map(summary))"
        )
    }

    /// Carol's identity is stamped 5 s after her message, past the 2 s wait, with nothing in between:
    /// in event time the wait ended first, so the message goes out with the fallback, in render and
    /// live, whether the identity reaches Kafka right behind the message or half a second later
    /// (both before the wall clock would end the wait).
    @Test(arguments: Arrival.allCases)
    func identityAfterTheWaitGivesTheFallbackLiveAsInRender(_ arrival: Arrival) async throws {
        let configuration = try testCoreConfiguration()
        #expect(configuration.identityWaitMilliseconds == 2_000)
        let world = [
            Scenario.identity("bob", "Bob", at: 0),
            Scenario.conversation("with-carol", members: ["carol", "bob"]),
            Scenario.phone("bob"),
            Scenario.message("m1", in: "with-carol", from: "carol", "hello", at: 1),
        ]
        let expected = try await liveMatchesRender(
            world, then: [Scenario.identity("carol", "Carol", at: 6)], arrival: arrival, configuration: configuration)
        let message = try #require(expected.first { $0.messageId == "m1" })
        #expect(message.content["identityResolved"] == .bool(false))
    }

    /// The same event (same id) produced twice, as an at-least-once producer does, right behind the
    /// first or after another message of the conversation: applied once, live as in render.
    @Test(arguments: Arrival.allCases)
    func duplicatedRecordIsAppliedOnceLiveAsInRender(_ arrival: Arrival) async throws {
        let configuration = try testCoreConfiguration()
        let m1 = Scenario.message("m1", in: "c1", from: "alice", "one", at: 1)
        let m2 = Scenario.message("m2", in: "c1", from: "alice", "two", at: 2)
        let expected = try await liveMatchesRender(
            Scenario.aliceAndBob + [m1, m1, m2], then: [m1, m2], arrival: arrival, configuration: configuration)
        #expect(expected.compactMap(\.messageId) == ["m1", "m2"])
        #expect(expected.map { $0.content["badge"] } == [.int(1), .int(2)])
    }

    /// Alice's message of second 1 reaches Kafka after her message of second 2 went out, far past
    /// `pipeline.lateness`: live it cannot be folded before it (the badges differ from
    /// render's, which is not promised for such input), but it still goes out, and only once. Stage 2
    /// used to take it for a copy of an earlier record, and suppressed it as `already-applied`. Both
    /// stages count what they fold late (`notify_event_time_late_total`), and what they read late
    /// (`notify_event_time_read_late_total`): m1 from `chat.messages`, its record from `notify.fanout`.
    @Test func aMessageWrittenPastTheLatenessBehindALaterOneStillGoesOut() async throws {
        let configuration = try testCoreConfiguration()
        let m1 = Scenario.message("m1", in: "c1", from: "alice", "one", at: 1)
        let m2 = Scenario.message("m2", in: "c1", from: "alice", "two", at: 2)
        let expected = try rendered(Scenario.aliceAndBob + [m1, m2], configuration: configuration)
        #expect(expected.compactMap(\.messageId) == ["m1", "m2"])
        let foldedLate = Mutex<[StageName: Int]>([:])
        let readLate = Mutex<[String: Int]>([:])
        let observer = PipelineObserver(
            onFoldedLate: { stage, count in foldedLate.withLock { $0[stage, default: 0] += count } },
            onReadLate: { topic, count in readLate.withLock { $0[topic, default: 0] += count } })
        try await withPipelineBroker { broker in
            let pipeline = RunningPipeline(broker, configuration: configuration, observer: observer)
            try await pipeline.ready()
            try await produce(Scenario.aliceAndBob + [m2], to: broker)
            // m1 reaches Kafka only once m2 has gone out: as late as a producer can be.
            _ = try await readCommands(from: broker) { $0.contains { $0.messageId == "m2" } }
            // The burst's tables may have come late too: read more than the lateness apart (the
            // lateness counts where the pipeline reads), as a conversation after an identity of its
            // millisecond in runs here at the default lateness (2026-12-06).
            let lateBefore = foldedLate.withLock { $0 }
            let readLateBefore = readLate.withLock { $0 }
            try await produce([m1], to: broker)
            _ = try await readCommands(from: broker) { $0.count >= expected.count }
            try await waitUntilCommitted(group: "notify-tests", broker: broker)
            let live = try await readCommands(from: broker) { $0.count >= expected.count }
            try await pipeline.stop()
            #expect(live.compactMap(\.messageId) == ["m2", "m1"])
            #expect(live.map { $0.content["badge"] } == [.int(1), .int(2)])
            #expect(Set(live.map(\.id)) == Set(expected.map(\.id)))
            let late = foldedLate.withLock { $0 }.merging(lateBefore) { $0 - $1 }
            #expect((late[.fanout] ?? 0) >= 1, "stage 1 folded m1 after m2: \(late)")
            #expect((late[.route] ?? 0) >= 1, "stage 2 folded m1's fanout record after m2's: \(late)")
            let read = readLate.withLock { $0 }.merging(readLateBefore) { $0 - $1 }
            #expect(read[Topic.messages] == 1, "m1, read after stage 1 let m2 go: \(read)")
            #expect(read[Topic.fanout] == 1, "and its fanout record, read after stage 2 let m2's go: \(read)")
        }
    }

    /// Carol's identity, stamped before the messages around it, reaches Kafka after every fanout task
    /// folded a message past it: read late by each task (every task reads the identities), and
    /// counted once, as one record of `chat.identities`.
    @Test func aLateIdentityIsCountedOnceThoughEveryTaskReadsIt() async throws {
        let configuration = try testCoreConfiguration()
        // A conversation in each of the four partitions: every task folds a message.
        let partitionOf = { (id: String) in KafkaPartitioner.murmur2.partition(of: Array(id.utf8), partitionCount: 4) }
        let byPartition = Dictionary(grouping: (1...40).map { "c\($0)" }, by: partitionOf).mapValues { $0[0] }
        let conversations = byPartition.keys.sorted().map { byPartition[$0]! }
        #expect(conversations.count == 4)
        let world =
            [Scenario.identity("alice", "Alice", at: 0), Scenario.identity("bob", "Bob", at: 0), Scenario.phone("bob")]
            + conversations.map { Scenario.conversation($0, members: ["alice", "bob"]) }
            + conversations.map { Scenario.message("m-\($0)", in: $0, from: "alice", "hi", at: 2) }
        let readLate = Mutex<[String: Int]>([:])
        let observer = PipelineObserver(onReadLate: { topic, count in
            readLate.withLock { $0[topic, default: 0] += count }
        })
        try await withPipelineBroker { broker in
            let pipeline = RunningPipeline(broker, configuration: configuration, observer: observer)
            try await pipeline.ready()
            try await produce(world, to: broker)
            _ = try await readCommands(from: broker) { $0.count >= conversations.count }
            let before = readLate.withLock { $0 }
            try await produce([Scenario.identity("carol", "Carol", at: 1)], to: broker)
            let deadline = ContinuousClock.now + .seconds(30)
            while readLate.withLock({ $0[Topic.identities] ?? 0 }) <= before[Topic.identities] ?? 0,
                ContinuousClock.now < deadline
            {
                try await Task.sleep(for: .milliseconds(50))
            }
            try await pipeline.stop()
            let read = readLate.withLock { $0 }.merging(before) { $0 - $1 }
            #expect(read[Topic.identities] == 1, "one record, read late by four tasks: \(read)")
            #expect((read[Topic.messages] ?? 0) == 0, "\(read)")
        }
    }

    /// Bob's phone comes to the foreground (settings screen) at second 1.5, but the app's report
    /// reaches Kafka after the message of second 2: the message still goes out as a local
    /// notification, live as in render, as long as the report is no later than `pipeline.lateness`
    /// (default 10 ms for the burst; set to 1 s for the report half a second late).
    @Test(arguments: Arrival.allCases)
    func lateClientStateStampedBeforeAMessageAppliesFirstLiveAsInRender(_ arrival: Arrival) async throws {
        let configuration = try testCoreConfiguration()
        let foreground = ScenarioEvent(
            topic: Topic.clientState,
            json: Scenario.json([
                "type": "client.state", "id": "s1", "at": Scenario.at(1.5), "userId": "bob", "deviceId": "bob-phone",
                "state": "foreground", "screen": ["kind": "settings"],
            ]))
        let expected = try await liveMatchesRender(
            Scenario.aliceAndBob + [
                Scenario.message("m1", in: "c1", from: "alice", "before", at: 1),
                Scenario.message("m2", in: "c1", from: "alice", "after", at: 2),
            ],
            then: [foreground], arrival: arrival, configuration: configuration,
            adjusting: { if arrival == .delayed { $0.lateness = .seconds(1) } })
        #expect(expected.filter { $0.messageId != nil }.map(\.path) == [.push, .local])
    }

    /// Stage 1 runs in an instance of its own, restarted with its tables restored and nothing read
    /// since (its tasks mark `.finished`), and sends its marks every second; stage 2, in another
    /// instance, has read tables. Bob's phone comes to the foreground 50 ms after Alice's message,
    /// and the phone's report reaches Kafka right before the message: stage 2 waits for stage 1's
    /// next send before it folds the report, and the message goes out as a push, as in render. It
    /// took a `.finished` heard from another instance for no floor, folded the report within the
    /// lateness, and sent the message as a local notification (by the time stage 1 said it had read
    /// the message).
    @Test func aStageOneElsewhereThatHadReadNothingKeepsItsFirstMessageInPlace() async throws {
        let configuration = try testCoreConfiguration()
        func adjust(_ settings: inout PipelineSettings, stage: StageName) {
            settings.stages = [stage]
            settings.lateness = .milliseconds(100)
            settings.markInterval = .seconds(1)
        }
        try await withPipelineBroker { broker in
            let route = RunningPipeline(broker, configuration: configuration) { adjust(&$0, stage: .route) }
            var fanout = RunningPipeline(broker, configuration: configuration) { adjust(&$0, stage: .fanout) }
            try await route.ready()
            try await fanout.ready()
            // The stages' event clocks follow the wall clock from the world's second 0.
            let started = ContinuousClock.now
            let world = Scenario.aliceAndBob + [Scenario.message("m0", in: "c1", from: "alice", "first", at: 0.5)]
            try await produce(world, to: broker)
            _ = try await readCommands(from: broker) { $0.count >= 1 }
            try await fanout.stop()
            let before = try await highWatermarks(of: [Topic.fanout], on: broker)
            let tasks = try await highWatermarks(of: [Topic.messages], on: broker).count
            fanout = RunningPipeline(broker, configuration: configuration) { adjust(&$0, stage: .fanout) }
            try await fanout.ready()
            // Every task of the new stage 1 says through Kafka that it has read everything and never had anything.
            _ = try await readTopic(Topic.fanout, from: broker, marks: true) { records in
                var finished: [Int32: Set<Int32>] = [:]
                for record in records where record.offset >= before[record.topicPartition] ?? 0 {
                    for header in record.headers where header.name == ProgressMark.header {
                        if let (task, mark) = header.value.flatMap(ProgressMark.parse), mark == .finished {
                            finished[record.partition, default: []].insert(task)
                        }
                    }
                }
                return before.keys.allSatisfy { finished[$0.partition]?.count == tasks }
            }
            try await Task.sleep(for: .milliseconds(500))  // For stage 2 to read them too: a setup, not a result.
            let second = (ContinuousClock.now - started).seconds + 0.2
            let foreground = ScenarioEvent(
                topic: Topic.clientState,
                json: Scenario.json([
                    "type": "client.state", "id": "s1", "at": Scenario.at(second + 0.05), "userId": "bob",
                    "deviceId": "bob-phone", "state": "foreground", "screen": ["kind": "settings"],
                ]))
            let message = Scenario.message("m1", in: "c1", from: "alice", "second", at: second)
            try await produce([foreground, message], to: broker)
            let expected = try rendered(world + [foreground, message], configuration: configuration)
            #expect(expected.filter { $0.messageId != nil }.map(\.path) == [.push, .push])
            try await expectRendersCommands(expected, from: broker)
            try await fanout.stop()
            try await route.stop()
        }
    }

    /// Alice writes Bob from a host whose clock runs 250 ms behind, Carol from one whose clock is
    /// right, both as they type (80 messages each, each sent 10 ms after the one before was
    /// acknowledged), in two conversations that two stage-1 tasks fold: Bob's badges count both, in
    /// render's order, at the default `pipeline.lateness` of 10 ms. Each stage-1 task's marks
    /// follow the `at` of its own input while that input is busy, so stage 2 waits for the slow
    /// clock's records rather than passing them; marks taken from the instance's clock (the
    /// fastest task's) let Carol's records go 250 ms before Alice's of the same moment came.
    @Test func aProducerWhoseClockRunsBehindKeepsItsPlaceLiveAsInRender() async throws {
        let configuration = try testCoreConfiguration()
        let conversations = ["alice-bob", "carol-bob"]
        #expect(
            Set(conversations.map { KafkaPartitioner.murmur2.partition(of: Array($0.utf8), partitionCount: 4) }).count
                == 2, "the two conversations must be folded by two stage-1 tasks")
        let world = [
            Scenario.identity("alice", "Alice", at: 0), Scenario.identity("bob", "Bob", at: 0),
            Scenario.identity("carol", "Carol", at: 0), Scenario.conversation("alice-bob", members: ["alice", "bob"]),
            Scenario.conversation("carol-bob", members: ["carol", "bob"]), Scenario.phone("bob"),
        ]
        let expected = try await liveMatchesRender(configuration: configuration) { broker in
            try await produce(world, to: broker)
            let start = ContinuousClock.now
            // Each writer keeps one producer, and stamps each message with its own clock as it sends it.
            return world
                + (try await withThrowingTaskGroup(of: [ScenarioEvent].self) { group in
                    for (sender, conversation, behind) in [("alice", "alice-bob", 0.25), ("carol", "carol-bob", 0.0)] {
                        group.addTask {
                            let producer = try KafkaProducer(configuration: client(broker), logger: testLogger)
                            var sent: [ScenarioEvent] = []
                            for index in 0..<80 {
                                let second = 10 + (ContinuousClock.now - start).seconds - behind
                                let message = Scenario.message(
                                    "\(sender)\(index)", in: conversation, from: sender, "hi", at: second)
                                _ = try await producer.send(try outgoingRecord(message))
                                sent.append(message)
                                // The pace of typing, not a wait for a result.
                                try await Task.sleep(for: .milliseconds(10))
                            }
                            await producer.close()
                            return sent
                        }
                    }
                    return try await group.reduce(into: []) { $0 += $1 }
                })
        }
        // Render interleaves the two conversations on Bob's phone, so an order that differs changes badges.
        let order = expected.compactMap(\.messageId).map { $0.hasPrefix("alice") }
        let switches = zip(order, order.dropFirst()).filter { $0 != $1 }.count
        #expect(order.count == 160)
        #expect(switches >= 40, "render's order switches conversation \(switches) times")
    }
}
