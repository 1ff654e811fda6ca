import Kafka
import NotifyCore
import Testing
@testable import NotifyPipeline

@Suite struct PartitionTaskTests {
    let logic: FanoutStageLogic

    init() throws {
        let stage = FanoutStage(configuration: try testCoreConfiguration())
        var identities = FanoutState()
        for event in [Scenario.identity("alice", "Alice", at: 0), Scenario.identity("bob", "Bob", at: 0)] {
            _ = stage.fold(&identities, try #require(try InputEvent.decode(topic: event.topic, value: Array(event.json.utf8)).fanoutInput))
        }
        logic = FanoutStageLogic(stage: stage, identities: identities)
    }

    func record(_ event: ScenarioEvent, key: String, offset: Int64, at second: Int64) -> KafkaRecord {
        KafkaRecord(topic: event.topic, partition: 0, offset: offset, key: Array(key.utf8), value: Array(event.json.utf8),
                    timestampMilliseconds: Scenario.base.milliseconds + second * 1000)
    }

    /// Folding sends the outputs at once but no changelog and no offsets; a save writes one
    /// changelog record per changed key, holding every change, and the offsets past all of it.
    @Test func aSaveWritesEachChangedKeyOnceWithTheOffsetsItCovers() throws {
        var task = PartitionTask<FanoutStageLogic>(
            partition: 0, state: logic.initialState(), merge: EventTimeMerge(lateness: 10, maximumWait: .seconds(3)))
        let messages = (0..<3).map { (index: Int64) -> KafkaRecord in
            let event = Scenario.message("m\(index)", in: "c1", from: "alice", "hi", at: Double(index + 1))
            return record(event, key: "c1", offset: index, at: index + 1)
        }
        let read = ContinuousClock.now
        var output = task.process(
            [record(Scenario.conversation("c1", members: ["alice", "bob"]), key: "c1", offset: 0, at: 0)] + messages,
            logic: logic, limits: RecordLimits(), now: read)
        #expect(output.records.count == 2, "the latest message waits until its input's time has passed it by the lateness")
        output.append(task.advanceClock(logic: logic, now: read + .milliseconds(11)))
        #expect(output.records.count == 3)
        #expect(output.changelog.isEmpty)
        #expect(output.offsets.isEmpty)

        let saved = task.save(logic: logic)
        #expect(saved.records.isEmpty)
        // A message folded after the save is not in its changelog, though the records are encoded later.
        let later = Scenario.message("m3", in: "c1", from: "alice", "later", at: 4)
        _ = task.process([record(later, key: "c1", offset: 3, at: 4)], logic: logic, limits: RecordLimits(), now: read)
        _ = task.advanceClock(logic: logic, now: read + .seconds(2))
        let changelog = saved.changelogRecords()
        #expect(changelog.map { String(decoding: $0.key ?? [], as: UTF8.self) } == ["c1"])
        let value = try ChangelogValue.decode(try #require(changelog.first).value)
        #expect(value.applied == [Topic.conversations: 0, Topic.messages: 2])
        #expect(value.recent == ["e-m0", "e-m1", "e-m2"], "the ids of the messages applied (the core recognises them again)")
        #expect(saved.offsets == [
            TopicPartition(topic: Topic.conversations, partition: 0): 1, TopicPartition(topic: Topic.messages, partition: 0): 3,
        ])

        // The later message is saved next; then nothing is new: nothing to write, and the offsets are stored already.
        let next = task.save(logic: logic)
        #expect(try ChangelogValue.decode(try #require(next.changelogRecords().first).value).applied[Topic.messages] == 3)
        let again = task.save(logic: logic)
        #expect(again.changelog.isEmpty)
        #expect(again.offsets.isEmpty)
    }
}

/// The merge's times stay ordered at their extremes: an input waiting in Kafka before its first record
/// floors at `.min`, and a mark built on it must not overflow when the lateness is taken off.
@Suite struct EventTimeMergeTests {
    @Test func aMarkAtTheLowestTimeNeitherOverflowsNorLetsAnythingGo() {
        let now = ContinuousClock.now
        var merge = EventTimeMerge<Int>(markedTopics: ["marked": 1], lateness: 10, maximumWait: .seconds(3))
        merge.noteMark(topic: "marked", task: 0, .at(.min), now: now)
        merge.noteLag("side", lagging: true, now: now)
        merge.noteLag("side", lagging: false, now: now)
        #expect(merge.floor(now: now) == .min)
        merge.noteMark(topic: "marked", task: 0, .idle(since: .min), now: now)
        #expect(merge.floor(now: now) == .min)
        #expect(ProgressMark.idle(since: .min).differs(from: .idle(since: .min), elapsed: .milliseconds(1)) == false)
        #expect(Int64.max.saturating(plus: 5) == .max)
        #expect(Int64.min.saturating(minus: 5) == .min)
    }
}
