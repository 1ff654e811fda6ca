import NotifyCore
import NotifyKafka
import Testing

@testable import NotifyPipeline

@Suite struct LocalProgressBoardTests {
    /// The sequence number a reader finds on a record the board numbered.
    func sequence(_ record: OutgoingRecord, on board: LocalProgressBoard) throws -> Int64 {
        try #require(
            board.sequence(
                of: KafkaRecord(
                    topic: record.topic, partition: record.partition ?? 0, offset: 0, key: nil, value: record.value,
                    headers: record.headers)))
    }

    /// A merge reading partition `partition` of the topic "marked", which one task writes.
    static func merge(reading partition: Int32, on board: LocalProgressBoard) -> EventTimeMerge<Int> {
        var merge = EventTimeMerge<Int>(
            markedTopics: ["marked": 1], lateness: 0, maximumWait: .seconds(3), localMarks: board)
        merge.partition = partition
        return merge
    }

    /// A local writer with nothing to say to a partition writes a fence there when it is taken; once
    /// its reader has read it, the writer's marks come from the board, with no record through Kafka.
    @Test func aWriterThatWritesNothingHereIsHeardOnceItsFenceIsRead() throws {
        let now = ContinuousClock.now
        let board = LocalProgressBoard()
        var merge = Self.merge(reading: 1, on: board)
        let base = try EventTimeMergeTests.input(0, at: 0).order.milliseconds
        board.publish(.at(base + 10_000), topic: "marked", task: 0, at: now)
        let fences = try #require(board.fence(topic: "marked", task: 0, partitions: 2))
        #expect(fences.map(\.partition) == [0, 1])
        #expect(fences.allSatisfy { $0.value.isEmpty })
        #expect(board.fence(topic: "marked", task: 0, partitions: 2) == nil, "one fence per taking")
        merge.add(try EventTimeMergeTests.input(5, at: 5), source: "a", now: now)
        var forced = 0
        var waited: [Duration] = []
        #expect(
            merge.release(now: now + .milliseconds(1), forced: &forced, waited: &waited).isEmpty,
            "the fence is not read yet")
        merge.noteSequence(topic: "marked", task: 0, try sequence(fences[1], on: board))
        #expect(merge.release(now: now + .milliseconds(1), forced: &forced, waited: &waited).map(\.input) == [5])
        #expect(merge.eventClock(now: now) == base + 10_000, "the local mark moves the event clock too")
    }

    /// A task given up and taken back must be read again before its marks count: the records its
    /// owner wrote meanwhile (another instance) carry no number of this board.
    @Test func aWriterTakenBackCountsOnlyOnceARecordFromAfterIsRead() throws {
        let now = ContinuousClock.now
        let board = LocalProgressBoard()
        var merge = Self.merge(reading: 0, on: board)
        let base = try EventTimeMergeTests.input(0, at: 0).order.milliseconds
        var written = [OutgoingRecord(topic: "marked", key: nil, value: [1], partition: 0)]
        board.number(&written, topic: "marked", task: 0)
        board.publish(.at(base + 10_000), topic: "marked", task: 0, at: now)
        merge.noteSequence(topic: "marked", task: 0, try sequence(written[0], on: board))
        merge.add(try EventTimeMergeTests.input(5, at: 5), source: "a", now: now)
        board.remove(tasks: [0])
        board.publish(.at(base + 10_000), topic: "marked", task: 0, at: now)  // Taken back.
        var forced = 0
        var waited: [Duration] = []
        #expect(
            merge.release(now: now + .milliseconds(1), forced: &forced, waited: &waited).isEmpty,
            "its records from before do not say what was written while it was away")
        let fences = try #require(board.fence(topic: "marked", task: 0, partitions: 1))
        merge.noteSequence(topic: "marked", task: 0, try sequence(fences[0], on: board))
        #expect(merge.release(now: now + .milliseconds(1), forced: &forced, waited: &waited).map(\.input) == [5])
    }

    /// A local writer nearly always has records on their way to a busy reader: it holds that reader
    /// to their times, not to its own older mark heard through Kafka, and to nothing later than them.
    @Test func aWritersRecordsOnTheirWayHoldItsReaderAtTheirTimes() throws {
        let now = ContinuousClock.now
        let board = LocalProgressBoard()
        var merge = Self.merge(reading: 0, on: board)
        let base = try EventTimeMergeTests.input(0, at: 0).order.milliseconds
        func records(at seconds: [Int64]) -> [OutgoingRecord] {
            seconds.map {
                OutgoingRecord(
                    topic: "marked", key: nil, value: [1], partition: 0, timestampMilliseconds: base + $0 * 1_000)
            }
        }
        var read = records(at: [1])
        board.number(&read, topic: "marked", task: 0)
        merge.noteSequence(topic: "marked", task: 0, try sequence(read[0], on: board))
        merge.publishReads()  // The reader is here: the writer's records to it are tracked from now on.
        var onTheirWay = records(at: [5, 7])
        board.number(&onTheirWay, topic: "marked", task: 0)
        board.publish(.at(base + 10_000), topic: "marked", task: 0, at: now)
        merge.add(try EventTimeMergeTests.input(4, at: 4), source: "a", now: now)
        merge.add(try EventTimeMergeTests.input(6, at: 6), source: "a", now: now)
        var forced = 0
        var waited: [Duration] = []
        #expect(merge.release(now: now + .milliseconds(1), forced: &forced, waited: &waited).map(\.input) == [4])
        merge.noteSequence(topic: "marked", task: 0, try sequence(onTheirWay[0], on: board))
        #expect(
            merge.release(now: now + .milliseconds(1), forced: &forced, waited: &waited).map(\.input) == [6],
            "the record of second 5 is read, the next on its way is of second 7")
    }

    /// A local writer that had no input when its fence went out said `.finished` through Kafka; its
    /// reader, caught up with it, hears from then on only the board. Once the writer has input its
    /// board mark holds the reader: the `.finished` heard through Kafka said nothing of what came
    /// later. (Taken as the later of the two floors, it let stage 2 fold a client state before the
    /// message the writer held, and a burst's records in the order the writers sent them.)
    @Test func aFinishedMarkHeardThroughKafkaGivesWayToTheBoard() throws {
        let now = ContinuousClock.now
        let board = LocalProgressBoard()
        var merge = Self.merge(reading: 0, on: board)
        let base = try EventTimeMergeTests.input(0, at: 0).order.milliseconds
        board.publish(.finished, topic: "marked", task: 0, at: now)
        let fences = try #require(board.fence(topic: "marked", task: 0, partitions: 1))
        merge.noteMark(topic: "marked", task: 0, .finished, local: true, now: now)
        merge.noteSequence(topic: "marked", task: 0, try sequence(fences[0], on: board))
        merge.add(try EventTimeMergeTests.input(5, at: 5), source: "a", now: now)
        var forced = 0
        var waited: [Duration] = []
        #expect(
            merge.release(now: now + .milliseconds(1), forced: &forced, waited: &waited).map(\.input) == [5],
            "a writer with no input holds nothing")
        merge.add(try EventTimeMergeTests.input(6, at: 6), source: "a", now: now + .milliseconds(2))
        board.publish(.at(base + 2_000), topic: "marked", task: 0, at: now + .milliseconds(2))
        #expect(
            merge.release(now: now + .milliseconds(3), forced: &forced, waited: &waited).isEmpty,
            "the writer holds a message of second 2")
        board.publish(.at(base + 7_000), topic: "marked", task: 0, at: now + .milliseconds(4))
        #expect(merge.release(now: now + .milliseconds(5), forced: &forced, waited: &waited).map(\.input) == [6])
    }

    /// The times of a writer's records on their way are kept only as far as the reader can use them:
    /// past what a reader far behind lets be kept, the records before are not known any more.
    @Test func aReaderFarBehindLearnsNothingOfTheRecordsNotKept() {
        var unread = LocalProgressBoard.Unread(trackedAfter: 10)
        #expect(unread.earliest(after: 9) == nil, "record 10 was written before the reader came")
        #expect(unread.earliest(after: 10) == .max, "nothing on its way")
        unread.append(sequence: 11, time: 500)
        unread.append(sequence: 12, time: 400)
        unread.append(sequence: 13, time: 600)
        #expect(unread.earliest(after: 10) == 400)
        #expect(unread.earliest(after: 12) == 600)
        for sequence in 14...Int64(14 + LocalProgressBoard.Unread.limit) {
            unread.append(sequence: sequence, time: sequence)
        }
        #expect(unread.earliest(after: 13) == nil)
        #expect(unread.earliest(after: Int64(14 + LocalProgressBoard.Unread.limit)) == .max)
    }

    /// A set of writer tasks as bits holds tasks past the first word, and two sets are equal when they
    /// hold the same tasks, however they were built.
    @Test func aTaskSetHoldsTasksPastTheFirstWord() {
        var built = LocalProgressBoard.TaskSet()
        for task: Int32 in [200, 3, 70, -1] { built.insert(task) }
        #expect(built.contains(3) && built.contains(70) && built.contains(200))
        #expect(!built.contains(71) && !built.contains(199) && !built.contains(900) && !built.contains(-1))
        #expect(built == [3, 70, 200])
        #expect(built != [3, 70])
        #expect(([] as LocalProgressBoard.TaskSet) == LocalProgressBoard.TaskSet())
        #expect(LocalProgressBoard.TaskSet().isEmpty && !built.isEmpty)
    }

    /// A set made with room for some tasks holds what a set grown task by task holds, and is equal
    /// to it; tasks past its room still go in.
    @Test func aTaskSetMadeWithRoomIsTheSetGrown() {
        for capacity in [0, 1, 64, 65, 128, 129, 256] {
            var roomy = LocalProgressBoard.TaskSet(capacity: capacity)
            #expect(roomy.isEmpty && roomy == LocalProgressBoard.TaskSet(), "capacity \(capacity)")
            for task: Int32 in [0, 63, 64, 127, 128, 255, 300] { roomy.insert(task) }
            #expect(roomy == [0, 63, 64, 127, 128, 255, 300], "capacity \(capacity)")
            #expect(!roomy.contains(1) && !roomy.contains(129) && !roomy.contains(256), "capacity \(capacity)")
        }
    }

    /// A set lists its tasks lowest first, across words; emptied with room kept, it holds nothing and
    /// takes tasks again as a new set does.
    @Test func aTaskSetListsItsTasksInOrderAndEmptiesWithItsRoom() {
        var set: LocalProgressBoard.TaskSet = [300, 0, 64, 63, 127, 5, 128]
        #expect(Array(set) == [0, 5, 63, 64, 127, 128, 300])
        #expect(Array(LocalProgressBoard.TaskSet()).isEmpty)
        #expect(Array(LocalProgressBoard.TaskSet(capacity: 256)).isEmpty, "empty words are skipped")
        for capacity in [0, 64, 65, 512] {
            set.removeAll(keepingRoomFor: capacity)
            #expect(set.isEmpty && set == [] && Array(set).isEmpty, "capacity \(capacity)")
            for task: Int32 in [400, 2] { set.insert(task) }
            #expect(Array(set) == [2, 400] && set == [2, 400], "capacity \(capacity)")
        }
    }

    /// A reading taken into the storage of an earlier one, of another partition and other writers,
    /// is the reading taken afresh.
    @Test func aReadingTakenAgainInPlaceIsTheReadingTakenAfresh() throws {
        let board = LocalProgressBoard()
        let now = ContinuousClock.now
        for task: Int32 in [0, 1, 70] { board.publish(.at(Int64(task)), topic: "marked", task: task, at: now) }
        board.publish(.at(9), topic: "other", task: 3, at: now)
        var records = [0, 1].map {
            OutgoingRecord(topic: "marked", key: nil, value: [1], partition: $0, timestampMilliseconds: 7)
        }
        board.number(&records, topic: "marked", task: 1)
        board.number(&records, topic: "marked", task: 70)
        let seen: LocalProgressBoard.ReadSequences = [1: try sequence(records[0], on: board)]
        var reading = board.writers(of: "marked", partition: 1, seen: [70: 1])
        #expect(reading.current.map(\.task) == [70] && reading.held.contains(70))
        board.read(&reading, of: "marked", partition: 0, seen: seen)
        let fresh = board.writers(of: "marked", partition: 0, seen: seen)
        #expect(reading.held == fresh.held && reading.held == [0, 1, 70])
        #expect(reading.current.map(\.task) == [1] && fresh.current.map(\.task) == [1])
        #expect(reading.current.map(\.mark) == fresh.current.map(\.mark))
        #expect(reading.current.map(\.unread) == fresh.current.map(\.unread))
        board.read(&reading, of: "other", partition: 0, seen: [:])
        #expect(reading.current.isEmpty && reading.held == [3])
    }

    /// A topic's writers, kept by task: each is found by its task, they are listed in task order, and
    /// the table counts them and has room up to its highest task.
    @Test func aWriterTableFindsEachWriterByItsTask() {
        var table = LocalProgressBoard.WriterTable()
        let writers = (0..<4).map { _ in LocalProgressBoard.Writer() }
        table[200] = writers[0]
        table[3] = writers[1]
        table[70] = writers[2]
        table[-1] = writers[3]
        #expect(table[200] === writers[0] && table[3] === writers[1] && table[70] === writers[2])
        #expect(table[-1] == nil && table[4] == nil && table[201] == nil && table[1_000] == nil)
        #expect(table.map(\.task) == [3, 70, 200])
        #expect(table.count == 3 && table.taskCount == 201)
        table[70] = nil
        table[70] = nil
        table[500] = nil
        table[3] = writers[3]
        #expect(table.map(\.task) == [3, 200] && table[3] === writers[3])
        #expect(table.count == 2 && table.taskCount == 201)
    }

    /// A writer's marks need not go through Kafka to a partition whose local reader has read its every
    /// record there; they must again once it writes more, or once the reader is given up.
    @Test func aWriterIsCurrentForAReaderThatReadItsEveryRecord() throws {
        let now = ContinuousClock.now
        let board = LocalProgressBoard()
        board.publish(.idle(since: 1_000_000), topic: "marked", task: 3, at: now)
        let fences = try #require(board.fence(topic: "marked", task: 3, partitions: 2))
        #expect(board.currentWriters(topic: "marked").isEmpty, "nothing read yet")
        board.noteRead(topic: "marked", partition: 1, seen: [3: try sequence(fences[1], on: board)])
        #expect(board.currentWriters(topic: "marked") == [1: [3]])
        var written = [OutgoingRecord(topic: "marked", key: nil, value: [1], partition: 1)]
        board.number(&written, topic: "marked", task: 3)
        #expect(board.currentWriters(topic: "marked").isEmpty, "a record on its way")
        board.noteRead(topic: "marked", partition: 1, seen: [3: try sequence(written[0], on: board)])
        #expect(board.currentWriters(topic: "marked") == [1: [3]])
        board.forgetReaders(of: ["marked"], partitions: [1])
        #expect(board.currentWriters(topic: "marked").isEmpty, "the reader given up")
    }

    /// Each reader's current writers are those of its own partition it has read up to their latest
    /// record there, among many writers and readers: not a writer whose records there it has not all
    /// read, nor one that never wrote there, nor one given up.
    @Test func eachReaderHasItsOwnCurrentWriters() throws {
        let now = ContinuousClock.now
        let board = LocalProgressBoard()
        let tasks: [Int32] = [1, 70, 200, 255]
        var fences: [Int32: [OutgoingRecord]] = [:]
        for task in tasks {
            board.publish(.idle(since: 1_000_000), topic: "marked", task: task, at: now)
            fences[task] = board.fence(topic: "marked", task: task, partitions: 3)
        }
        // Task 200 writes one record more to partition 2; task 255 is given up; task 5 writes nothing.
        var written = [OutgoingRecord(topic: "marked", key: nil, value: [1], partition: 2)]
        board.number(&written, topic: "marked", task: 200)
        board.remove(tasks: [255])
        board.publish(.idle(since: 1_000_000), topic: "marked", task: 5, at: now)
        var seen: [Int32: LocalProgressBoard.ReadSequences] = [:]
        for partition: Int32 in 0..<3 {
            for task in tasks {
                seen[partition, default: [:]][task] = try sequence(fences[task]![Int(partition)], on: board)
            }
            seen[partition]![5] = 1  // Said to be read, but there is no record of task 5 to have read.
        }
        seen[0]![70] = nil  // The reader of partition 0 has read nothing of task 70.
        seen[1]![1] = 0  // Nor that of partition 1 of task 1.
        for (partition, read) in seen { board.noteRead(topic: "marked", partition: partition, seen: read) }
        #expect(board.currentWriters(topic: "marked") == [0: [1, 200], 1: [70, 200], 2: [1, 70]])
        seen[2]![200] = try sequence(written[0], on: board)
        board.noteRead(topic: "marked", partition: 2, seen: seen[2]!)
        #expect(board.currentWriters(topic: "marked") == [0: [1, 200], 1: [70, 200], 2: [1, 70, 200]])
    }

    /// The writers an event clock counts, read without a ``LocalProgressBoard/Reading``, are those
    /// the reading lists with nothing unread: not one with records on their way, not one given up.
    /// Each reader gets the latest clock among the writers it has caught up with.
    @Test func theCaughtUpWritersAreTheReadingsWithNothingUnread() throws {
        let now = ContinuousClock.now
        let board = LocalProgressBoard()
        var seen = LocalProgressBoard.ReadSequences()
        for task: Int32 in 0..<4 {
            board.publish(.idle(since: 1_000_000 * Int64(task + 1)), topic: "marked", task: task, at: now)
            let fences = try #require(board.fence(topic: "marked", task: task, partitions: 1))
            seen[task] = try sequence(fences[0], on: board)
        }
        board.noteRead(topic: "marked", partition: 0, seen: seen)
        var written = [OutgoingRecord(topic: "marked", key: nil, value: [1], partition: 0, timestampMilliseconds: 7)]
        board.number(&written, topic: "marked", task: 1)  // On its way: task 1 is not caught up.
        board.remove(tasks: [2])  // Given up: no mark of task 2 counts.
        var everyRecordRead = seen
        everyRecordRead[1] = try sequence(written[0], on: board)
        seen[3] = nil  // Task 3 not read at all.
        let clock = { (mark: ProgressMark, madeAt: ContinuousClock.Instant) -> Int64? in
            #expect(madeAt == now)
            guard case .idle(let since) = mark else { return nil }
            return since
        }
        let clocks = board.latestCaughtUpClocks(
            of: "marked", readers: [(0, seen), (0, everyRecordRead)], clock: clock)
        let reading = board.writers(of: "marked", partition: 0, seen: seen)
        let expected = reading.current.filter { $0.unread == .max }.compactMap { entry -> Int64? in
            if case .idle(let since) = entry.mark { since } else { nil }
        }
        #expect(clocks == [1_000_000, 4_000_000], "task 0's alone, then the latest of tasks 0, 1 and 3")
        #expect(clocks[0] == expected.max())
        #expect(reading.current.map(\.task).sorted() == [0, 1], "task 1 is listed, with its record's time unread")
        #expect(board.latestCaughtUpClocks(of: "other", readers: [(0, seen)], clock: clock) == [nil])
    }

    /// The merge tells the board what it has read, once per change.
    @Test func aMergeTellsTheBoardWhatItRead() throws {
        let board = LocalProgressBoard()
        var merge = Self.merge(reading: 0, on: board)
        board.publish(.idle(since: 1_000_000), topic: "marked", task: 2, at: .now)
        let fences = try #require(board.fence(topic: "marked", task: 2, partitions: 1))
        merge.noteSequence(topic: "marked", task: 2, try sequence(fences[0], on: board))
        #expect(board.currentWriters(topic: "marked").isEmpty, "not told yet")
        merge.publishReads()
        #expect(board.currentWriters(topic: "marked") == [0: [2]])
    }

    /// One instance holds every reader of its marks: once they have read its tasks' fences and records,
    /// its marks go through memory only, and a quiet pipeline writes nothing to the marked topics
    /// (it wrote one value-less record to each of their partitions every 20 ms before).
    @Test func oneInstanceSendsNoMarkRecordsOnceItsReadersHaveReadItsWriters() async throws {
        let configuration = try testCoreConfiguration()
        try await withPipelineBroker(partitions: 4) { broker in
            let pipeline = RunningPipeline(broker, configuration: configuration)
            try await pipeline.ready()
            try await produceOneCommand(to: broker)
            let marked = [Topic.fanout, Topic.fanoutRepartition, Topic.routeRepartition]
            // A second (50 mark intervals) in which nothing is written, within 30 s.
            let deadline = ContinuousClock.now + .seconds(30)
            var written: [TopicPartition: Int64] = [:]
            repeat {
                let before = try await highWatermarks(of: marked, on: broker)
                try await Task.sleep(for: .seconds(1))
                let after = try await highWatermarks(of: marked, on: broker)
                written = [:]
                for (place, end) in after where end != before[place] { written[place] = end - (before[place] ?? 0) }
            } while !written.isEmpty && ContinuousClock.now < deadline
            try await pipeline.stop()
            #expect(written.isEmpty, "records written in a quiet second: \(written)")
        }
    }

    /// The writers a reading holds are kept as bits: those numbered 64 and on (a topic of 256
    /// partitions) count as held as well as the first 64, and no others do.
    @Test func writersNumberedPastSixtyFourAreHeld() {
        let board = LocalProgressBoard()
        let writers: [Int32] = [0, 63, 64, 200, 255]
        for task in writers { board.publish(.at(1), topic: "marked", task: task, at: .now) }
        let held = board.writers(of: "marked", partition: 0, seen: [:]).held
        for task in writers { #expect(held.contains(task)) }
        for task: Int32 in [-1, 1, 62, 65, 128, 254, 256, 1_000] { #expect(!held.contains(task)) }
    }
}
