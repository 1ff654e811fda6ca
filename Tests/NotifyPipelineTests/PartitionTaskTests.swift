import NotifyCore
import NotifyKafka
import Testing

@testable import NotifyPipeline

@Suite struct PartitionTaskTests {
    let logic: FanoutStageLogic

    init() throws {
        let stage = FanoutStage(configuration: try testCoreConfiguration())
        var identities = FanoutState()
        for event in [Scenario.identity("alice", "Alice", at: 0), Scenario.identity("bob", "Bob", at: 0)] {
            _ = stage.fold(
                &identities,
                try #require(try InputEvent.decode(topic: event.topic, value: Array(event.json.utf8)).fanoutInput))
        }
        logic = FanoutStageLogic(stage: stage, identities: identities)
    }

    func record(_ event: ScenarioEvent, key: String, offset: Int64, at second: Int64) -> KafkaRecord {
        KafkaRecord(
            topic: event.topic, partition: 0, offset: offset, key: Array(key.utf8), value: Array(event.json.utf8),
            timestampMilliseconds: Scenario.base.milliseconds + second * 1000)
    }

    /// Events decoded ahead of their task (by the stage's consumer loop) fold as the task's own
    /// decoding would: the same records and the same dead letters, for good, malformed, unknown and
    /// oversized values; an oversized one is never parsed.
    @Test func aBatchDecodedAheadFoldsAsOneTheTaskDecodes() {
        let limits = RecordLimits(maxRecordBytes: 400)
        func raw(_ json: String, offset: Int64) -> KafkaRecord {
            KafkaRecord(
                topic: Topic.messages, partition: 0, offset: offset, key: Array("c1".utf8), value: Array(json.utf8),
                timestampMilliseconds: 0)
        }
        let long = String(repeating: "x", count: 500)
        let records = [
            record(Scenario.conversation("c1", members: ["alice", "bob"]), key: "c1", offset: 0, at: 0),
            record(Scenario.message("m1", in: "c1", from: "alice", "hi", at: 1), key: "c1", offset: 0, at: 1),
            raw(#"{"type":"message.created","id":"broken""#, offset: 1),
            raw(#"{"type":"profile.changed","id":"p1","at":"2026-11-22T09:00:00Z"}"#, offset: 2),
            record(Scenario.message("m2", in: "c1", from: "alice", long, at: 2), key: "c1", offset: 3, at: 2),
            record(Scenario.message("m3", in: "c1", from: "bob", "bye", at: 3), key: "c1", offset: 4, at: 3),
        ]
        let ahead = ConsumedRecord.decodingAhead(records, logic: logic, limits: limits)
        #expect(
            ahead.map { $0.event != nil } == [true, true, true, true, false, true], "the oversized one is not parsed")
        #expect(ahead.map { (try? $0.event?.get()) != nil } == [true, true, false, false, false, true])

        let now = ContinuousClock.now
        func fold(_ consumed: [ConsumedRecord]) -> (records: [String], deadLetters: [String]) {
            var task = PartitionTask<FanoutStageLogic>(
                partition: 0, state: logic.initialState(), merge: EventTimeMerge(lateness: 10, maximumWait: .seconds(3))
            )
            var output = task.process(consumed, logic: logic, limits: limits, now: now)
            output.append(task.advanceClock(logic: logic, now: now + .seconds(1)))
            return (output.records.map { String(decoding: $0.value, as: UTF8.self) }, output.deadLetters.map(\.reason))
        }
        let decodedAhead = fold(ahead)
        let decodedByTask = fold(records.map { ConsumedRecord($0) })
        #expect(decodedAhead.records.count == 2, "m1 to bob, m3 to alice")
        #expect(decodedAhead.deadLetters.count == 3, "the malformed, the unknown and the oversized record")
        #expect(decodedAhead.records == decodedByTask.records)
        #expect(decodedAhead.deadLetters == decodedByTask.deadLetters)
    }

    /// A task taken back after it was given up forgets what its merge knew then: the marks it heard
    /// are of the time before, and the records its writers wrote meanwhile come first.
    @Test func aTaskTakenBackForgetsTheMarksItKnew() throws {
        let template = EventTimeMerge<FanoutStageLogic.Input>(
            markedTopics: ["marked": 1], lateness: 10, maximumWait: .seconds(3))
        var task = PartitionTask<FanoutStageLogic>(partition: 3, state: logic.initialState(), merge: template)
        let away = ContinuousClock.now
        task.merge.noteMark(topic: "marked", task: 0, .idle(since: 1_000_000), now: away)
        task.anchor = (EventTime(milliseconds: 1_000), away)
        #expect(task.merge.floor(now: away + .seconds(60)) == 990, "the idle mark heard, less the lateness")
        task.resume(with: template)
        #expect(task.merge.floor(now: away + .seconds(60)) == .min, "nothing heard since it came back")
        #expect(task.merge.partition == 3)
        #expect(task.anchor == nil)
    }

    /// A task taken back holds what it reads for the lateness after its first record, as a task just
    /// assigned does: it resumes with the runner's untouched merge, not with the clock of its merge
    /// from before, which would let the first records after a rebalance pass the tables a burst
    /// brings in the same moment.
    @Test func aTaskTakenBackHoldsItsFirstRecordsForTheLateness() throws {
        let template = EventTimeMerge<FanoutStageLogic.Input>(lateness: 10, maximumWait: .seconds(3))
        var task = PartitionTask<FanoutStageLogic>(partition: 0, state: logic.initialState(), merge: template)
        let conversation = record(Scenario.conversation("c1", members: ["alice", "bob"]), key: "c1", offset: 0, at: 0)
        let first = record(Scenario.message("m1", in: "c1", from: "alice", "one", at: 1), key: "c1", offset: 0, at: 1)
        let read = ContinuousClock.now
        var before = task.process([conversation, first], logic: logic, limits: RecordLimits(), now: read)
        before.append(task.advanceClock(logic: logic, now: read + .seconds(1)))
        #expect(before.records.count == 1, "m1 to bob")

        task.resume(with: template)
        let second = record(Scenario.message("m2", in: "c1", from: "alice", "two", at: 2), key: "c1", offset: 1, at: 2)
        let back = read + .seconds(60)
        let held = task.process([second], logic: logic, limits: RecordLimits(), now: back)
        #expect(held.records.isEmpty, "held for the lateness after its first record since it came back")
        #expect(
            task.merge.nextRelease == back + .microseconds(10_001),
            "the batch foresees its release: the lateness since its first record, and a microsecond past its time")
        #expect(task.advanceClock(logic: logic, now: back + .milliseconds(5)).records.isEmpty)
        #expect(task.advanceClock(logic: logic, now: back + .milliseconds(11)).records.count == 1, "m2 to bob")
    }

    /// A task taken back stores no offset past the records its merge held when it was given up: they
    /// are read again from the group's commit, and a save before they are (a quiet tick saves every
    /// task) stored the offset past them, so that a partition moved on again started past records
    /// never folded.
    @Test func aTaskTakenBackStoresNoOffsetPastWhatItsMergeHeld() throws {
        let template = EventTimeMerge<FanoutStageLogic.Input>(lateness: 10, maximumWait: .seconds(3))
        var task = PartitionTask<FanoutStageLogic>(partition: 0, state: logic.initialState(), merge: template)
        let conversation = record(Scenario.conversation("c1", members: ["alice", "bob"]), key: "c1", offset: 0, at: 0)
        let message = record(Scenario.message("m1", in: "c1", from: "alice", "one", at: 1), key: "c1", offset: 0, at: 1)
        let held = task.process([conversation, message], logic: logic, limits: RecordLimits(), now: .now)
        #expect(held.records.isEmpty, "both wait in the merge: the lateness after its first record")
        let givenUp = task.save(logic: logic)
        #expect(givenUp.offsets[TopicPartition(topic: Topic.messages, partition: 0)] == 0, "m1 waits: read again")

        task.resume(with: template)
        let back = task.save(logic: logic)
        #expect(back.offsets.isEmpty, "nothing read since it came back: no offset to store")
    }

    /// An idle mark heard through Kafka holds its readers at what it said until the writer speaks
    /// again: the writer, in another instance, may have died just after it, and its task's next owner
    /// will write the records of the messages that came meanwhile. A local writer's mark moves on
    /// with the wall clock: it lives as long as its reader.
    @Test func anIdleMarkFromAnotherInstanceDoesNotMoveOnByItself() throws {
        let board = LocalProgressBoard()
        var merge = EventTimeMerge<Int>(
            markedTopics: ["marked": 2], lateness: 10, maximumWait: .seconds(30), localMarks: board)
        let heard = ContinuousClock.now
        merge.noteMark(topic: "marked", task: 0, .idle(since: 1_000_000), now: heard)
        merge.noteMark(topic: "marked", task: 1, .at(5_000), now: heard)
        #expect(merge.floor(now: heard + .seconds(20)) == 990)
        merge.noteMark(topic: "marked", task: 0, .idle(since: 1_020_000), now: heard + .milliseconds(20))
        #expect(merge.floor(now: heard + .seconds(20)) == 1_010, "said again, 20 ms on")
        // The same writer in this instance, every record of it read here: its mark moves on.
        var records = [OutgoingRecord(topic: "marked", key: nil, value: [1], partition: 0)]
        board.number(&records, topic: "marked", task: 0)
        board.publish(.idle(since: 1_020_000), topic: "marked", task: 0, at: heard)
        merge.noteSequence(topic: "marked", task: 0, 1)
        #expect(merge.floor(now: heard + .seconds(2)) == 3_010)
    }

    /// A mark read from a record this instance wrote moves on with the clock while the instance
    /// holds the writer's task, and stops when the task is given up (its next owner may be elsewhere).
    @Test func aMarkThisInstanceWroteMovesOnWhileItHoldsTheTask() throws {
        let board = LocalProgressBoard()
        var merge = EventTimeMerge<Int>(
            markedTopics: ["marked": 1], lateness: 10, maximumWait: .seconds(30), localMarks: board)
        let heard = ContinuousClock.now
        board.publish(.idle(since: 1_000_000), topic: "marked", task: 0, at: heard)
        merge.noteMark(topic: "marked", task: 0, .idle(since: 1_000_000), local: true, now: heard)
        #expect(merge.floor(now: heard + .seconds(2)) == 2_990)
        board.remove(tasks: [0])
        #expect(merge.floor(now: heard + .seconds(2)) == 990)
    }

    /// A task just assigned tells its readers nothing until the consumer says where its inputs stand,
    /// though its restored tables are recent and the instance's clock is at the present: it may be
    /// about to read (and write again) records from long before.
    @Test func aTaskJustAssignedClaimsNoProgressUntilItsPositionIsKnown() throws {
        var task = PartitionTask<FanoutStageLogic>(
            partition: 0, state: logic.initialState(), merge: EventTimeMerge(lateness: 10, maximumWait: .seconds(30)))
        let assigned = ContinuousClock.now
        task.awaitPositions(logic: logic, now: assigned)
        let table = [record(Scenario.conversation("c1", members: ["alice", "bob"]), key: "c1", offset: 0, at: 100)]
        _ = task.restoreTable(Topic.conversations, table, logic: logic, limits: RecordLimits())
        let early = task.progressMark(
            for: Topic.fanout, logic: logic, instanceClock: 100_000, now: assigned + .milliseconds(50))
        #expect(early == .at(.min), "no progress claimed before the position of its messages is known")
        // The consumer reports every input read to its end: the mark moves on.
        let lag = Dictionary(
            uniqueKeysWithValues: logic.inputTopics.map { (TopicPartition(topic: $0, partition: 0), Int64(0)) })
        _ = task.advanceClock(logic: logic, lag: lag, now: assigned + .milliseconds(60))
        let known = task.progressMark(
            for: Topic.fanout, logic: logic, instanceClock: 100_000, now: assigned + .milliseconds(60))
        #expect(known != .at(.min))
    }

    /// What a task does with a lag it is told without records of its own (its runner tells it the
    /// lag of a batch that has none; that the runner does is `StageRunnerTests`'): a task whose
    /// inputs were read to their end follows the instance's clock, and once told its messages wait
    /// it holds its readers at the time it has read to, not at that clock, which the other tasks'
    /// records of a burst had put past its own waiting ones.
    @Test func aTaskToldTheLagOfABatchWithoutItsRecordsHoldsItsReaders() throws {
        var task = PartitionTask<FanoutStageLogic>(
            partition: 0, state: logic.initialState(), merge: EventTimeMerge(lateness: 200, maximumWait: .seconds(30)))
        let assigned = ContinuousClock.now
        task.awaitPositions(logic: logic, now: assigned)
        func lag(messages: Int64) -> [TopicPartition: Int64] {
            Dictionary(
                uniqueKeysWithValues: logic.inputTopics.map {
                    (TopicPartition(topic: $0, partition: 0), $0 == Topic.messages ? messages : 0)
                })
        }
        _ = task.process([KafkaRecord](), logic: logic, limits: RecordLimits(), lag: lag(messages: 0), now: assigned)
        let burstClock = EventMicroseconds.microseconds(Scenario.base.milliseconds + 10_000)
        let quiet = task.progressMark(
            for: Topic.fanout, logic: logic, instanceClock: burstClock, now: assigned + .milliseconds(10))
        #expect(quiet == .idle(since: burstClock), "read to its end, the task follows the instance's clock")
        task.noteLag(lag(messages: 250), logic: logic, now: assigned + .milliseconds(10))
        let waiting = task.progressMark(
            for: Topic.fanout, logic: logic, instanceClock: burstClock, now: assigned + .milliseconds(10))
        #expect(waiting == .at(.min), "its first messages are still to come: nothing is passed")
    }

    /// A task folds no message past an identity it has not heard yet: until the identity follower
    /// says where chat.identities stands, its partitions count as having records waiting. Without
    /// that, a burst of messages read before the follower's first batch carried event time past the
    /// identity wait, and every message went out unresolved though its sender's identity came first.
    @Test func aTaskFoldsNoMessagePastIdentitiesNotYetHeard() throws {
        var task = PartitionTask<FanoutStageLogic>(
            partition: 0, state: logic.initialState(), merge: EventTimeMerge(lateness: 10, maximumWait: .seconds(30)))
        let identities = StageRunner<FanoutStageLogic>.source(Topic.identities, 0)
        let assigned = ContinuousClock.now
        task.awaitPositions(logic: logic, heard: [identities: true], now: assigned)
        let table = [record(Scenario.conversation("c1", members: ["carol", "bob"]), key: "c1", offset: 0, at: 0)]
        _ = task.restoreTable(Topic.conversations, table, logic: logic, limits: RecordLimits())
        let burst: [KafkaRecord] = (0..<8).map { (index: Int) -> KafkaRecord in
            let second = Int64(1 + index)
            let message = Scenario.message("m\(index)", in: "c1", from: "carol", "hello", at: Double(second))
            return record(message, key: "c1", offset: Int64(index), at: second)
        }
        let readToEnd = Dictionary(
            uniqueKeysWithValues: logic.inputTopics.map { (TopicPartition(topic: $0, partition: 0), Int64(0)) })
        let early = task.process(burst, logic: logic, limits: RecordLimits(), lag: readToEnd, now: assigned)
        #expect(early.records.count == 0, "nothing goes before the follower has said where chat.identities stands")

        let carol = record(Scenario.identity("carol", "Carol", at: 0.5), key: "carol", offset: 0, at: 0)
        var output = task.hear(
            [carol], source: { _ in identities }, lagging: [identities: false], logic: logic,
            limits: RecordLimits(), now: assigned + .milliseconds(10))
        output.append(task.advanceClock(logic: logic, lag: readToEnd, now: assigned + .seconds(2)))
        let values = output.records.map { String(decoding: $0.value, as: UTF8.self) }
        #expect(values.count == 8)
        #expect(values.allSatisfy { $0.contains("\"Carol\"") }, "every message is resolved: \(values.first ?? "none")")
    }

    /// The merge folds in event-time order, not in the order of the offsets: a key's record at a
    /// later offset (here a late one) can be folded while one at an earlier offset still waits. The
    /// save must not count the waiting one as applied: a restart reads again from below it and would
    /// skip it (issue 22: after a crash, commands of a device lost and its later badges one short).
    @Test func aSaveCountsNoRecordStillWaitingAsApplied() throws {
        let template = EventTimeMerge<FanoutStageLogic.Input>(lateness: 10, maximumWait: .seconds(3))
        var task = PartitionTask<FanoutStageLogic>(partition: 0, state: logic.initialState(), merge: template)
        let conversation = record(Scenario.conversation("c1", members: ["alice", "bob"]), key: "c1", offset: 0, at: 0)
        let later = record(
            Scenario.message("m-later", in: "c1", from: "alice", "later", at: 5), key: "c1", offset: 0, at: 5)
        let late = record(
            Scenario.message("m-late", in: "c1", from: "alice", "late", at: 3), key: "c1", offset: 1, at: 3)
        func messages(_ output: TaskOutput) -> [String] {
            output.records.map { String(decoding: $0.value, as: UTF8.self).contains("m-later") ? "m-later" : "m-late" }
        }
        let read = ContinuousClock.now
        var folded = task.process([conversation, later, late], logic: logic, limits: RecordLimits(), now: read)
        #expect(folded.records.isEmpty, "nothing goes in the first lateness after the task's first record")
        folded.append(task.advanceClock(logic: logic, now: read + .milliseconds(10)))
        #expect(messages(folded) == ["m-late"], "the late record goes; the later one waits for its input's time")

        let saved = task.save(logic: logic)
        let value = try ChangelogValue.decode(try #require(saved.changelogRecords().first).value)
        #expect(value.applied[Topic.messages] == nil, "offset 0 waits, so no offset of chat.messages is wholly applied")
        #expect(saved.offsets[TopicPartition(topic: Topic.messages, partition: 0)] == 0)

        // A restart restores the changelog and reads chat.messages again from offset 0.
        var restarted = PartitionTask<FanoutStageLogic>(partition: 0, state: logic.initialState(), merge: template)
        for record in saved.changelogRecords() {
            try restarted.restore(
                key: String(decoding: record.key ?? [], as: UTF8.self), value: try ChangelogValue.decode(record.value),
                logic: logic)
        }
        var again = restarted.process([later, late], logic: logic, limits: RecordLimits(), now: read)
        again.append(restarted.advanceClock(logic: logic, now: read + .seconds(1)))
        #expect(messages(again) == ["m-later"], "the waiting message is folded; the late one is known already")

        // Taken back after it was given up, the task reads again from the same offset.
        task.resume(with: template)
        var back = task.process([later, late], logic: logic, limits: RecordLimits(), now: read)
        back.append(task.advanceClock(logic: logic, now: read + .seconds(1)))
        #expect(messages(back) == ["m-later"])
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
        #expect(output.records.isEmpty, "nothing goes in the first lateness after the task's first record")
        output.append(task.advanceClock(logic: logic, now: read + .milliseconds(10)))
        #expect(
            output.records.count == 2, "the latest message waits until its input's time has passed it by the lateness")
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
        #expect(
            value.recent == ["e-m0", "e-m1", "e-m2"], "the ids of the messages applied (the core recognises them again)"
        )
        #expect(
            saved.offsets == [
                TopicPartition(topic: Topic.conversations, partition: 0): 1,
                TopicPartition(topic: Topic.messages, partition: 0): 3,
            ])

        // The later message is saved next; then nothing is new: nothing to write, and the offsets are stored already.
        let next = task.save(logic: logic)
        #expect(
            try ChangelogValue.decode(try #require(next.changelogRecords().first).value).applied[Topic.messages] == 3)
        let again = task.save(logic: logic)
        #expect(again.changelog.isEmpty)
        #expect(again.offsets.isEmpty)
    }
}

extension PartitionTask {
    /// Processes `records` as the stage's consumer loop hands them over: decoded ahead.
    mutating func process(
        _ records: [KafkaRecord], logic: Logic, limits: RecordLimits, lag: [TopicPartition: Int64]? = nil,
        now: ContinuousClock.Instant = .now
    ) -> TaskOutput {
        process(
            ConsumedRecord.decodingAhead(records, logic: logic, limits: limits), logic: logic, limits: limits, lag: lag,
            now: now)
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
        #expect(ProgressMark.idle(since: .min).differs(from: .idle(since: .min)) == false)
        #expect(Int64.max.saturating(plus: 5) == .max)
        #expect(Int64.min.saturating(minus: 5) == .min)
    }

    /// A writer whose inputs lag before their first record marks `.at(.min)`: a floor, not a time. A
    /// reader that heard nothing else has no event clock, and so no floor for its inputs read to
    /// their end from it; the writer's own floor still holds everything.
    @Test func aMarkAtTheLowestTimeTellsNoClock() {
        let now = ContinuousClock.now
        var merge = EventTimeMerge<Int>(markedTopics: ["marked": 1], lateness: 10, maximumWait: .seconds(3))
        merge.noteMark(topic: "marked", task: 0, .at(.min), now: now)
        #expect(merge.clockTime(of: .at(.min), heardAt: now, now: now) == nil)
        #expect(merge.eventClock(now: now + .seconds(1)) == nil)
        #expect(merge.floor(now: now + .seconds(1)) == .min)
        merge.noteMark(topic: "marked", task: 0, .finished, now: now)
        #expect(merge.floor(now: now + .seconds(1)) == .max)
    }

    /// A writer in another instance that has read nothing (`.finished`) says it read a record only at
    /// its next send of marks: a reader with an event clock holds its records for one lateness and
    /// one mark interval more than its own inputs read to their end need (here, a record of second
    /// 5 goes 40 ms after it was read, not 10 ms after).
    @Test func aFinishedWriterElsewhereHoldsTheLatenessAndAMarkIntervalMore() throws {
        let read = ContinuousClock.now
        var merge = EventTimeMerge<Int>(
            markedTopics: ["marked": 1], lateness: 10, maximumWait: .seconds(3), markInterval: .milliseconds(20))
        merge.noteMark(topic: "marked", task: 0, .finished, now: read)
        let record = try Self.input(1, at: 5)
        merge.add(record, source: "side", now: read)
        merge.noteLag("side", lagging: false, now: read)
        var forced = 0
        var waited: [Duration] = []
        for after in [10, 11, 39] {
            #expect(merge.release(now: read + .milliseconds(after), forced: &forced, waited: &waited).isEmpty)
        }
        #expect(merge.floor(now: read + .milliseconds(39)) == record.order.milliseconds - 1)
        #expect(merge.release(now: read + .milliseconds(41), forced: &forced, waited: &waited).map(\.input) == [1])
        #expect(forced == 0)
    }

    /// A writer's `.at` mark stands the lateness behind its clock; a reader's clock adds it back, so
    /// that its own quiet inputs are held back by the lateness once, not twice.
    @Test func aReadersClockIsItsWritersMarkPlusTheLateness() {
        let now = ContinuousClock.now
        var merge = EventTimeMerge<Int>(markedTopics: ["marked": 1], lateness: 10, maximumWait: .seconds(3))
        merge.noteMark(topic: "marked", task: 0, .at(5_000), now: now)
        merge.noteLag("side", lagging: true, now: now)
        merge.noteLag("side", lagging: false, now: now)
        #expect(merge.eventClock(now: now) == 5_010)
        #expect(merge.floor(now: now) == 5_000, "the quiet side input: the clock less the lateness")
    }

    /// The heard clock a merge keeps between looks (``EventTimeMerge/keepHeardClock(now:)``) is the
    /// one worked out afresh after each change: a mark heard, a record read, a lag that ends.
    @Test func aKeptHeardClockFollowsEveryChange() throws {
        let now = ContinuousClock.now
        var merge = EventTimeMerge<Int>(markedTopics: ["marked": 1], lateness: 10, maximumWait: .seconds(3))
        merge.noteMark(topic: "marked", task: 0, .at(5_000), now: now)
        merge.keepHeardClock(now: now)
        #expect(merge.eventClock(now: now) == 5_010)
        merge.noteMark(topic: "marked", task: 0, .at(6_000), now: now)
        #expect(merge.eventClock(now: now) == 6_010, "a mark heard")
        merge.keepHeardClock(now: now)
        let input = try Self.input(1, at: 1)
        let time = input.order.milliseconds
        merge.add(input, source: "messages", now: now)
        merge.noteLag("messages", lagging: true, now: now)
        #expect(merge.eventClock(now: now) == time, "a record read")
        merge.keepHeardClock(now: now)
        let later = now + .milliseconds(7)
        #expect(merge.eventClock(now: later) == time + 7, "the kept clock moves on with the wall clock")
        merge.noteLag("messages", lagging: false, now: later)
        #expect(merge.eventClock(now: later) == time, "read to its end only now: it moves on from now")
    }

    /// A record goes as soon as every floor has passed its time, not at the next whole millisecond:
    /// the wall-clock time added to the last event time read is counted in microseconds.
    @Test func aRecordGoesAsSoonAsItsTimeIsPassed() throws {
        let read = ContinuousClock.now
        var merge = EventTimeMerge<Int>(lateness: 10, maximumWait: .seconds(3))
        let input = try Self.input(1, at: 1)
        let time = input.order.milliseconds
        merge.add(input, source: "messages", now: read)
        merge.noteLag("messages", lagging: false, now: read)
        var forced = 0
        var waited: [Duration] = []
        #expect(
            merge.release(now: read + .milliseconds(10), forced: &forced, waited: &waited).isEmpty,
            "exactly the lateness: not passed")
        #expect(merge.floor(now: read + .microseconds(10_001)) == time + 1, "a microsecond past it")
        #expect(merge.release(now: read + .microseconds(10_001), forced: &forced, waited: &waited).map(\.input) == [1])
        #expect(forced == 0)
        #expect(waited == [.microseconds(10_001)], "the record waited from its read to its release")
    }

    /// The first batch of a burst puts the clock at its latest time; an input read to its end (as
    /// the consumer sees it) may still bring the same burst's earlier records a moment later: it
    /// holds everything for the lateness after the merge's first record (CI, 2026-11-29: 995 of a
    /// burst's 1,000 messages went before their conversations and were dead-lettered).
    @Test func aFirstBurstWaitsTheLatenessForTheInputsReadToTheirEnd() throws {
        let read = ContinuousClock.now
        var merge = EventTimeMerge<Int>(lateness: 10, maximumWait: .seconds(3))
        merge.noteLag("conversations", lagging: true, now: read)
        merge.noteLag("conversations", lagging: false, now: read)
        for number in 1...100 {
            merge.add(try Self.input(number, at: 10 + Double(number) / 100), source: "messages", now: read)
        }
        merge.noteLag("messages", lagging: false, now: read)
        var forced = 0
        var waited: [Duration] = []
        #expect(merge.release(now: read, predicting: true, forced: &forced, waited: &waited).isEmpty)
        #expect(merge.nextRelease == read + .milliseconds(10), "when the lateness since the first record ends")
        merge.add(try Self.input(0, at: 0), source: "conversations", now: read + .milliseconds(5))
        #expect(merge.release(now: read + .milliseconds(5), forced: &forced, waited: &waited).isEmpty)
        let released = merge.release(now: read + .milliseconds(10), forced: &forced, waited: &waited)
        #expect(released.map(\.input) == Array(0...99), "the burst's earlier record first, then the burst")
        #expect(
            merge.release(now: read + .microseconds(10_001), forced: &forced, waited: &waited).map(\.input) == [100])
        #expect(forced == 0)
    }

    /// A merge asked to predict says when the wall clock alone lets its earliest record go (looking
    /// at most 5 ms ahead), or ends its maximum wait; and nothing when a floor that only records or
    /// marks move holds it (an input with records waiting in Kafka), or when it was not asked.
    @Test func theWallClockSaysWhenTheEarliestRecordCanGo() throws {
        let read = ContinuousClock.now
        var merge = EventTimeMerge<Int>(lateness: 10, maximumWait: .seconds(3))
        var forced = 0
        var waited: [Duration] = []
        // A record 20 ms before, gone once the lateness since the merge's first record has passed.
        merge.add(try Self.input(0, at: 0.98), source: "messages", now: read - .milliseconds(20))
        merge.noteLag("messages", lagging: false, now: read - .milliseconds(20))
        #expect(
            merge.release(now: read - .microseconds(9_999), forced: &forced, waited: &waited).map(\.input) == [0])
        merge.add(try Self.input(1, at: 1), source: "messages", now: read)
        #expect(merge.release(now: read + .milliseconds(2), predicting: true, forced: &forced, waited: &waited).isEmpty)
        #expect(merge.nextRelease == read + .milliseconds(7), "5 ms ahead, where the floor has moved on as far")
        #expect(merge.release(now: read + .milliseconds(3), forced: &forced, waited: &waited).isEmpty)
        #expect(merge.nextRelease == nil, "a release that does not predict (a tick's) forgets the moment")
        #expect(merge.release(now: read + .milliseconds(3), predicting: true, forced: &forced, waited: &waited).isEmpty)
        #expect(merge.nextRelease == read + .milliseconds(8))
        #expect(merge.release(now: read + .milliseconds(7), predicting: true, forced: &forced, waited: &waited).isEmpty)
        #expect(merge.nextRelease == read + .microseconds(10_001), "the lateness and a microsecond past its time")
        #expect(
            merge.release(now: read + .microseconds(10_001), predicting: true, forced: &forced, waited: &waited).map(
                \.input) == [1])
        #expect(merge.nextRelease == nil, "nothing waits")

        var overdue = EventTimeMerge<Int>(lateness: 10, maximumWait: .milliseconds(4))
        overdue.add(try Self.input(1, at: 1), source: "messages", now: read)
        overdue.noteLag("messages", lagging: false, now: read)
        #expect(
            overdue.release(now: read + .milliseconds(2), predicting: true, forced: &forced, waited: &waited).isEmpty)
        #expect(overdue.nextRelease == read + .milliseconds(4), "its maximum wait ends first")

        var lagging = EventTimeMerge<Int>(lateness: 10, maximumWait: .seconds(3))
        lagging.add(try Self.input(2, at: 2), source: "messages", now: read)
        lagging.add(try Self.input(1, at: 1), source: "other", now: read)
        lagging.noteLag("messages", lagging: false, now: read)
        lagging.noteLag("other", lagging: true, now: read)
        #expect(
            lagging.release(now: read + .milliseconds(2), predicting: true, forced: &forced, waited: &waited).isEmpty)
        #expect(lagging.nextRelease == nil, "only the lagging input's next record moves its floor")
    }

    /// A message of `second` (after Scenario's origin) as the merge takes it, numbered by its id.
    static func input(_ number: Int, at second: Double, offset: Int64 = 0) throws -> DecodedInput<Int> {
        let event = Scenario.message("m\(number)", in: "c\(number % 7)", from: "alice", "hi", at: second)
        let record = KafkaRecord(
            topic: Topic.messages, partition: 0, offset: offset, key: Array("c\(number % 7)".utf8),
            value: Array(event.json.utf8))
        return DecodedInput(
            record: record, event: try InputEvent.decode(topic: Topic.messages, value: record.value), input: number,
            partitioned: true)
    }

    /// Records that arrive in any order come out in event-time order, each once.
    @Test func recordsComeOutInEventTimeOrderWhateverTheArrival() throws {
        let now = ContinuousClock.now
        var merge = EventTimeMerge<Int>(lateness: 0, maximumWait: .seconds(3))
        var generator = SystemRandomNumberGenerator()
        let arrival = Array(0..<500).shuffled(using: &generator)
        for number in arrival { merge.add(try Self.input(number, at: Double(number) / 10), source: "a", now: now) }
        merge.noteLag("a", lagging: true, now: now)
        // Lagging at the latest time read (49.9 s): everything before it goes, in order.
        var forced = 0
        var waited: [Duration] = []
        let released = merge.release(now: now, forced: &forced, waited: &waited).map(\.input)
        #expect(released == Array(0..<499))
        #expect(forced == 0)
        #expect(merge.count == 1)
    }

    /// Records come out once each and in order while the merge drops the folded ones from its front
    /// (past 1,024 of them, with a record still waiting behind), and the lowest offset still
    /// buffered stays known.
    @Test func recordsComeOutOnceWhileTheFoldedAreDropped() throws {
        let now = ContinuousClock.now
        var merge = EventTimeMerge<Int>(lateness: 0, maximumWait: .seconds(3))
        var released: [Int] = []
        var forced = 0
        var waited: [Duration] = []
        // Rounds of 600 records that arrive latest first: the latest of each round waits into the next.
        for round in 0..<5 {
            for number in (round * 600..<(round + 1) * 600).reversed() {
                let input = try Self.input(number, at: Double(number) / 10, offset: Int64(number))
                merge.add(input, source: "a", now: now)
            }
            merge.noteLag("a", lagging: true, now: now)
            released += merge.release(now: now, forced: &forced, waited: &waited).map(\.input)
            #expect(merge.count == 1)
            #expect(merge.bufferedOffsets().byTopic[Topic.messages] == Int64((round + 1) * 600 - 1))
        }
        #expect(released == Array(0..<2_999))
        #expect(forced == 0)
    }

    /// A record that waited the maximum goes, with everything before it, and is counted; later
    /// records stay.
    @Test func anOverdueRecordGoesWithEverythingBeforeIt() throws {
        let start = ContinuousClock.now
        var merge = EventTimeMerge<Int>(markedTopics: ["marked": 1], lateness: 0, maximumWait: .seconds(3))
        merge.noteMark(topic: "marked", task: 0, .at(0), now: start)  // Holds everything back.
        merge.add(try Self.input(2, at: 2), source: "a", now: start)
        merge.add(try Self.input(1, at: 1), source: "a", now: start + .seconds(1))
        merge.add(try Self.input(3, at: 3), source: "a", now: start + .seconds(2))
        var forced = 0
        var waited: [Duration] = []
        #expect(merge.release(now: start + .seconds(2), forced: &forced, waited: &waited).isEmpty)
        #expect(merge.release(now: start + .seconds(3), forced: &forced, waited: &waited).map(\.input) == [1, 2])
        #expect(forced == 2)
        #expect(merge.release(now: start + .seconds(4), forced: &forced, waited: &waited).map(\.input) == [])
        #expect(merge.release(now: start + .seconds(5), forced: &forced, waited: &waited).map(\.input) == [3])
        #expect(forced == 3)
    }

    /// A record that comes after a later one was folded is folded when it comes, and counted: render
    /// folds it first. Records that come in order are not counted.
    @Test func aRecordFoldedAfterALaterOneIsCountedLate() throws {
        let now = ContinuousClock.now
        var merge = EventTimeMerge<Int>(lateness: 0, maximumWait: .seconds(3))
        merge.noteLag("a", lagging: true, now: now)  // Its floor: the latest time read from it.
        var forced = 0
        var waited: [Duration] = []
        merge.add(try Self.input(2, at: 2), source: "a", now: now)
        merge.add(try Self.input(3, at: 3), source: "a", now: now)
        #expect(merge.release(now: now, forced: &forced, waited: &waited).map(\.input) == [2])
        #expect(merge.foldedLate == 0)
        merge.add(try Self.input(1, at: 1), source: "a", now: now)
        #expect(merge.release(now: now, forced: &forced, waited: &waited).map(\.input) == [1])
        #expect(merge.foldedLate == 1, "1 came after 2 was folded")
        merge.add(try Self.input(4, at: 4), source: "a", now: now)
        #expect(merge.release(now: now, forced: &forced, waited: &waited).map(\.input) == [3])
        #expect(merge.foldedLate == 1, "3 comes after 2: in order")
    }

    /// A record read below a floor a release has already passed is read late, whatever its input
    /// (the count names the input that came late), also when it folds in order (nothing later was
    /// folded yet); one above that floor is not. With no floor at all (every writer `.finished`),
    /// the latest record let go stands for it.
    @Test func aRecordReadBelowAPassedFloorIsReadLate() throws {
        let now = ContinuousClock.now
        var merge = EventTimeMerge<Int>(markedTopics: [Topic.fanout: 1], lateness: 0, maximumWait: .seconds(3))
        merge.noteMark(topic: Topic.fanout, task: 0, .finished, now: now)
        var forced = 0
        var waited: [Duration] = []
        #expect(!merge.add(try Self.input(2, at: 2), source: Topic.fanout, now: now))
        #expect(merge.release(now: now, forced: &forced, waited: &waited).map(\.input) == [2], "no floor holds it")
        #expect(merge.add(try Self.input(1, at: 1), source: Topic.fanout, now: now), "below the record let go")
        merge.noteLag("a", lagging: true, now: now)  // Its floor: the latest time read from it.
        #expect(!merge.add(try Self.input(3, at: 3), source: "a", now: now))
        #expect(!merge.add(try Self.input(4, at: 4), source: "a", now: now))
        #expect(merge.release(now: now, forced: &forced, waited: &waited).map(\.input) == [1, 3])
        #expect(merge.add(try Self.input(5, at: 3.5), source: "a", now: now), "below the floor (4 s), after 3's fold")
        #expect(merge.add(try Self.input(6, at: 2.5), source: Topic.fanout, now: now), "whatever its input")
        #expect(!merge.add(try Self.input(7, at: 5), source: "a", now: now))
        #expect(merge.release(now: now, forced: &forced, waited: &waited).map(\.input) == [6, 5, 4])
        #expect(merge.foldedLate == 2, "1 after 2, 6 after 3; 5 folded in order, read late all the same")
    }

    /// A writer's mark is held by an input that lags while it brings records, not by one that
    /// brought nothing for the maximum wait: its readers would wait for it for good.
    @Test func aMarkIsNotHeldByAnInputGoneSilent() throws {
        let start = ContinuousClock.now
        var merge = EventTimeMerge<Int>(lateness: 10, maximumWait: .seconds(3))
        let input = try Self.input(1, at: 1)
        merge.add(input, source: "slow", now: start)
        merge.noteLag("slow", lagging: true, now: start)
        var forced = 0
        var waited: [Duration] = []
        _ = merge.release(now: start, forced: &forced, waited: &waited)
        let time = input.order.milliseconds
        #expect(
            merge.mark(
                of: ["slow"], held: nil, includingBuffered: false, instanceClock: time * 1_000, now: start + .seconds(2)
            )
                == .at(time))
        #expect(
            merge.mark(
                of: ["slow"], held: nil, includingBuffered: false, instanceClock: (time + 5_000) * 1_000,
                now: start + .seconds(3)
            )
                == .idle(since: (time + 5_000) * 1_000))
    }

    /// A writer's `.at` mark names the first whole millisecond its inputs read to their end can still
    /// bring: their floor (the clock less the lateness, in microseconds) rounded up, as the merge's
    /// own floor is. A record of the millisecond before is below the floor, so nothing of it can come.
    @Test func aMarkNamesTheFirstMillisecondItsInputsCanStillBring() throws {
        let start = ContinuousClock.now
        var merge = EventTimeMerge<Int>(lateness: 10, maximumWait: .seconds(30))
        let read = try Self.input(1, at: 1)
        merge.add(read, source: "messages", now: start)
        let time = read.order.milliseconds
        func mark(after elapsed: Duration) -> ProgressMark {
            // A message held for later keeps the mark `.at`.
            merge.mark(
                of: ["messages"], held: time + 100, includingBuffered: false, instanceClock: nil, now: start + elapsed)
        }
        #expect(mark(after: .milliseconds(10)) == .at(time), "the floor is exactly the record's millisecond")
        #expect(mark(after: .microseconds(10_001)) == .at(time + 1), "the floor is inside its millisecond")
        #expect(mark(after: .microseconds(10_999)) == .at(time + 1))
        #expect(merge.floor(now: start + .microseconds(10_001)) == time + 1, "as the merge's own floor says")
    }

    /// In a burst, event time runs far ahead of the wall clock: an input read to its end holds
    /// records back to where the clock stood the lateness ago (in wall-clock time), not to the
    /// clock now less the lateness, which the burst has carried seconds ahead.
    @Test func aBurstDoesNotCarryAQuietInputsFloorAhead() throws {
        let start = ContinuousClock.now
        var merge = EventTimeMerge<Int>(lateness: 10, maximumWait: .seconds(30))
        var forced = 0
        var waited: [Duration] = []
        merge.add(try Self.input(0, at: 0), source: "quiet", now: start)
        merge.add(try Self.input(1, at: 1), source: "fast", now: start)
        #expect(merge.release(now: start, forced: &forced, waited: &waited).isEmpty, "the merge's first lateness")
        // 5 s of event time a millisecond later: the quiet input may still bring anything after 1 s.
        merge.add(try Self.input(6, at: 6), source: "fast", now: start + .milliseconds(1))
        #expect(merge.release(now: start + .milliseconds(1), forced: &forced, waited: &waited).isEmpty)
        #expect(merge.release(now: start + .milliseconds(10), forced: &forced, waited: &waited).map(\.input) == [0])
        // The lateness later, the clock then (6 s) has settled: what came before it goes.
        #expect(merge.release(now: start + .milliseconds(11), forced: &forced, waited: &waited).map(\.input) == [1])
        #expect(forced == 0)
    }

    /// A local writer that has written nothing to the reader's partition yet is not taken at its
    /// word: records an earlier owner of its task wrote there (before a crash or a rebalance) may not
    /// be read yet, and they carry no number of this board.
    @Test func aLocalWriterThatWroteNothingHereIsHeardThroughKafka() throws {
        let now = ContinuousClock.now
        let board = LocalProgressBoard()
        var merge = EventTimeMerge<Int>(
            markedTopics: ["marked": 1], lateness: 0, maximumWait: .seconds(3), localMarks: board)
        merge.partition = 0
        let base = try Self.input(0, at: 0).order.milliseconds
        board.publish(.at(base + 10_000), topic: "marked", task: 0, at: now)
        merge.add(try Self.input(5, at: 5), source: "a", now: now)
        var forced = 0
        var waited: [Duration] = []
        #expect(
            merge.release(now: now + .milliseconds(1), forced: &forced, waited: &waited).isEmpty,
            "no record of this writer read here yet")
        merge.noteMark(topic: "marked", task: 0, .at(base + 10_000), now: now)
        #expect(
            merge.release(now: now + .milliseconds(1), forced: &forced, waited: &waited).map(\.input) == [5],
            "its mark through Kafka")
    }

    /// A writer in the same instance is heard without the round trip through Kafka, but only once
    /// the reader has read the records it wrote before its mark.
    @Test func aLocalMarkCountsOnceTheWritersRecordsAreRead() throws {
        let now = ContinuousClock.now
        let board = LocalProgressBoard()
        var merge = EventTimeMerge<Int>(
            markedTopics: ["marked": 1], lateness: 0, maximumWait: .seconds(3), localMarks: board)
        merge.partition = 0
        // The writer wrote one record to partition 0, then says it will write nothing before 10 s.
        var written = [OutgoingRecord(topic: "marked", key: nil, value: [1], partition: 0)]
        board.number(&written, topic: "marked", task: 0)
        let base = try Self.input(0, at: 0).order.milliseconds
        board.publish(.at(base + 10_000), topic: "marked", task: 0, at: now)
        merge.add(try Self.input(5, at: 5), source: "a", now: now)
        var forced = 0
        var waited: [Duration] = []
        // Input "a" is read to its end: only the writer holds the record back.
        #expect(
            merge.release(now: now + .milliseconds(1), forced: &forced, waited: &waited).isEmpty,
            "the writer's record is not read yet")
        let sequence = try #require(
            board.sequence(
                of: KafkaRecord(
                    topic: "marked", partition: 0, offset: 0, key: nil, value: [1], headers: written[0].headers)))
        merge.noteSequence(topic: "marked", task: 0, sequence)
        #expect(merge.release(now: now + .milliseconds(1), forced: &forced, waited: &waited).map(\.input) == [5])
        // Gone with its task: nothing more is taken from it.
        board.remove(tasks: [0])
        merge.add(try Self.input(6, at: 6), source: "a", now: now)
        #expect(merge.release(now: now + .milliseconds(2), forced: &forced, waited: &waited).isEmpty)
    }
}
