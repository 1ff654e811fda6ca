import NotifyCore
import NotifyKafka
import NotifyRecords
import Tracing

/// What a batch of input made, ready for Kafka: outputs (with dead letters)
/// first, then (when the tasks save, see ``PartitionTask/save(logic:)``) the
/// changelog once they are acknowledged, then the offsets.
struct TaskOutput: Sendable {
    var records: [OutgoingRecord] = []
    var changelog: [ChangelogSnapshot] = []
    var offsets: [TopicPartition: Int64] = [:]
    var commands: [NotificationCommand] = []
    var decisions: [Decision] = []
    var deadLetters: [DeadLetter] = []
    /// Messages that began waiting for their sender's identity.
    var identityWaits = 0
    /// Messages released without their sender's identity.
    var identityTimeouts = 0
    /// Records folded because they waited the merge's maximum wait, not because every input had passed them.
    var releasedByMaximumWait = 0
    /// Records folded after one that comes later in event-time order (``EventTimeMerge/foldedLate``).
    var foldedLate = 0
    /// Input topic → its records read after the merge had let records go past their time
    /// (``EventTimeMerge/add(_:source:now:)``).
    var readLate: [String: Int] = [:]
    /// How long each record folded had waited in the event-time merge, from its read to its fold.
    var eventTimeWaits: [Duration] = []
    /// Input topic → its records not in their key's partition (forwarded to the repartition topic).
    var misplaced: [String: Misplaced] = [:]
    /// Input topics with a key seen in more than one partition.
    var spreadKeys: Set<String> = []

    var isEmpty: Bool { records.isEmpty && changelog.isEmpty && offsets.isEmpty }

    mutating func append(_ other: TaskOutput) {
        // Usually one partition: no copy.
        if records.isEmpty { records = other.records } else { records += other.records }
        changelog += other.changelog
        offsets.merge(other.offsets) { max($0, $1) }
        commands += other.commands
        decisions += other.decisions
        deadLetters += other.deadLetters
        identityWaits += other.identityWaits
        identityTimeouts += other.identityTimeouts
        releasedByMaximumWait += other.releasedByMaximumWait
        foldedLate += other.foldedLate
        readLate.merge(other.readLate, uniquingKeysWith: +)
        if eventTimeWaits.isEmpty {
            eventTimeWaits = other.eventTimeWaits
        } else {
            eventTimeWaits += other.eventTimeWaits
        }
        misplaced.merge(other.misplaced) { $0.adding($1) }
        spreadKeys.formUnion(other.spreadKeys)
    }

    /// The changelog records of every save in this output, encoded now.
    func changelogRecords() -> [OutgoingRecord] {
        changelog.flatMap { $0.records() }
    }
}

/// Records of one topic found in another partition than their key's.
struct Misplaced: Sendable {
    var count = 0
    /// The partitioners that would have put every one of them where it was.
    var likelyPartitioners: [KafkaPartitioner] = KafkaPartitioner.allCases

    mutating func note(_ candidates: [KafkaPartitioner]) {
        count += 1
        likelyPartitioners = likelyPartitioners.filter(candidates.contains)
    }

    func adding(_ other: Misplaced) -> Misplaced {
        Misplaced(
            count: count + other.count, likelyPartitioners: likelyPartitioners.filter(other.likelyPartitioners.contains)
        )
    }
}

/// The headers of a record forwarded to a repartition topic.
enum RepartitionHeader {
    /// The topic it was read from.
    static let topic = "notify-topic"
    /// `topic/partition@offset` it was read at.
    static let source = "notify-source"
}

/// The changelog of the keys one save covered, as the state was when it saved. The records are
/// encoded only when asked for, so the runner encodes them off its actor while folding goes on.
struct ChangelogSnapshot: Sendable {
    private let encode: @Sendable () -> [OutgoingRecord]

    init(encode: @escaping @Sendable () -> [OutgoingRecord]) {
        self.encode = encode
    }

    /// One record per key, in key order.
    func records() -> [OutgoingRecord] { encode() }
}

/// One partition's worth of a stage: its state, and where its inputs stand.
///
/// Records are folded one at a time in event-time order (``EventOrder``); nothing here does I/O.
struct PartitionTask<Logic: StageLogic>: Sendable {
    typealias DecodedRecord = DecodedInput<Logic.Input>

    /// Where a waiting record sits in the input.
    struct Position: Sendable, Hashable {
        var key: String
        var topic: String
        var offset: Int64
    }

    let partition: Int32
    var state: Logic.State
    /// key → what has been applied to it (restored from the changelog).
    var progress: [String: KeyProgress] = [:]
    /// Input topic → the next offset to read.
    var processed: [String: Int64] = [:]
    /// Records whose work is not finished (held messages) → where they are.
    var waiting: [String: Position] = [:]
    /// The event time the state had when the wall clock last read `wall`.
    var anchor: (eventTime: EventTime, wall: ContinuousClock.Instant)?
    /// Records read and not yet folded, in event-time order (see ``EventTimeMerge``).
    var merge: EventTimeMerge<Logic.Input>
    /// Keys changed since their last changelog record (see ``save(logic:)``).
    var unsaved: Set<String> = []
    /// The offsets the last save gave (forgotten when the task is assigned again).
    var savedOffsets: [TopicPartition: Int64] = [:]
    /// Table topic → offset → the dead letter of a bad record of this partition found when the table
    /// was read at assignment (see ``restoreTable(_:_:logic:limits:)``), written when the live consumer
    /// reaches that offset; offsets below the first it reads were handled before the group's commit.
    var tableDeadLetters: [String: [Int64: DeadLetter]] = [:]

    /// How many partitions the stage's co-partitioned inputs have.
    let partitionCount: Int32
    /// For keys forwarded here from other partitions: topic and key → the partition they came from,
    /// to notice a key that arrives from several (a random partitioner). Forgotten past 10,000 keys.
    var forwardedFrom: [String: Int32] = [:]
    /// Whether folds record spans (see ``RecordTracing``).
    var tracing = RecordTracing.off

    init(partition: Int32, partitionCount: Int32 = 1, state: Logic.State, merge: EventTimeMerge<Logic.Input>) {
        self.partition = partition
        self.partitionCount = partitionCount
        self.state = state
        self.merge = merge
        self.merge.partition = partition
    }

    /// Takes the task back after it was given up. What its merge knew (records read and not
    /// folded, the writers' marks, its inputs' floors) and its wall-clock anchor are of the time
    /// before: kept, an idle mark or a quiet input would move on by the whole time away and let
    /// records go before those written meanwhile are read, and event time would jump by it. Its
    /// inputs are read again from the group's commit, and its next owner's changes since are in
    /// the changelog.
    mutating func resume(with merge: EventTimeMerge<Logic.Input>) {
        // The records the old merge holds are read again: none may count as applied, and no offset
        // past them may be stored. Kept, the offsets read before made a save that came before they
        // were read again (a quiet tick saves every task) store the offset past them; had the
        // partition moved on again, its next owner would have started past records never folded.
        progress = appliedOffsets(of: progress.keys, buffered: self.merge.bufferedOffsets())
        processed = [:]
        self.merge = merge
        self.merge.partition = partition
        anchor = nil
    }

    /// Counts every input as having records waiting in Kafka until the consumer says where it stands
    /// (the next batch or tick): a task just assigned, or taken back, does not know yet what its inputs
    /// hold from the group's commit on. Without this it would look read to its end, and its mark
    /// idle near the present (the instance's clock, or its restored tables' latest time), and readers
    /// would fold past the records it is about to write again: after a crash, a device's badges swapped.
    /// `heard` says the same of the inputs every task hears (``hear(_:source:lagging:logic:limits:now:)``),
    /// as their follower last reported.
    mutating func awaitPositions(logic: Logic, heard: [String: Bool] = [:], now: ContinuousClock.Instant) {
        for topic in logic.inputTopics { merge.noteLag(topic, lagging: true, now: now) }
        for (source, lagging) in heard { merge.noteLag(source, lagging: lagging, now: now) }
    }

    /// Takes the records of this partition read in one batch, and folds, in event-time order
    /// (``EventOrder``: the `at` inside each event, never the record timestamp), those that no input
    /// can still bring an earlier record than (see ``EventTimeMerge``). `lag` says which inputs have
    /// records waiting in Kafka beyond those read.
    mutating func process(
        _ records: consuming [ConsumedRecord], logic: Logic, limits: RecordLimits, lag: [TopicPartition: Int64]? = nil,
        now: ContinuousClock.Instant = .now
    ) -> TaskOutput {
        var output = TaskOutput()
        // Moved out one by one, first to last: iterated, each record and its event would be copied, a
        // retain and a release per field.
        var records = records
        records.withUnsafeMutableBufferPointer { $0.reverse() }
        while let consumed = records.popLast() {
            let record = consumed.record
            processed[record.topic] = record.offset + 1
            if let letter = tableDeadLetter(at: record) {
                output.deadLetters.append(letter)
                continue
            }
            if let forward = forwarding(record, logic: logic) {
                output.records.append(forward.record)
                output.misplaced[record.topic, default: Misplaced()].note(forward.likely)
                continue
            }
            let marks = Self.marks(of: record)
            // A record with marks and no value is a mark record (see ``StageRunner/announceMarks()``), nothing else.
            if !(record.value.isEmpty && !marks.isEmpty),
                let input = decode(record, decodedAhead: consumed.event, logic: logic, limits: limits, into: &output)
            {
                if merge.add(input, source: record.topic, now: now) { output.readLate[record.topic, default: 0] += 1 }
            }
            let sequence = marks.isEmpty ? nil : merge.localMarks?.sequence(of: record)
            for (task, mark) in marks {
                merge.noteMark(topic: record.topic, task: task, mark, local: sequence != nil, now: now)
            }
            if let (task, _) = marks.first, let sequence {
                merge.noteSequence(topic: record.topic, task: task, sequence)
            }
        }
        merge.publishReads()
        noteLag(lag, logic: logic, now: now)
        foldReleased(logic: logic, now: now, predicting: true, into: &output)
        return output
    }

    /// A record of a users' producer that is not in the partition murmur2 of its key gives, as the
    /// record forwarding it, unchanged, to that partition of the stage's repartition topic, where the
    /// task that owns the key reads it (as Kafka Streams' repartition topics do); with the
    /// partitioners that would have put it where it was.
    func forwarding(_ record: KafkaRecord, logic: Logic) -> (record: OutgoingRecord, likely: [KafkaPartitioner])? {
        guard partitionCount > 1, let key = record.key, logic.externalTopics.contains(record.topic) else { return nil }
        let owner = KafkaPartitioner.murmur2.partition(of: key, partitionCount: partitionCount)
        guard owner != record.partition else { return nil }
        let headers =
            record.headers + [
                KafkaHeader(name: RepartitionHeader.topic, string: record.topic),
                KafkaHeader(
                    name: RepartitionHeader.source, string: "\(record.topic)/\(record.partition)@\(record.offset)"),
            ]
        let likely = KafkaPartitioner.candidates(for: key, partition: record.partition, partitionCount: partitionCount)
        // No timestamp of the producer's: ``stampMarks`` takes a record's timestamp for its event time.
        return (
            OutgoingRecord(
                topic: logic.repartitionTopic, key: key, value: record.value, headers: headers, partition: owner),
            likely
        )
    }

    /// The progress marks in a record's headers: one on a record a task made, one per task of the
    /// writing instance on a mark record (see ``StageRunner/announceMarks()``).
    static func marks(of record: KafkaRecord) -> [(task: Int32, mark: ProgressMark)] {
        record.headers.compactMap { header in
            guard header.name == ProgressMark.header, let value = header.value else { return nil }
            return ProgressMark.parse(value)
        }
    }

    /// Folds what the merge lets go now, between batches: floors that move with the wall clock (an
    /// input read to its end, an idle writer's mark, a local writer's mark) pass buffered records
    /// while nothing arrives for this task.
    mutating func releaseDue(logic: Logic, now: ContinuousClock.Instant) -> TaskOutput {
        var output = TaskOutput()
        foldReleased(logic: logic, now: now, predicting: true, into: &output)
        return output
    }

    /// Folds what the merge lets go; `predicting`: the merge works out when the wall clock will let
    /// its next record go (see ``EventTimeMerge/nextRelease``), for the release loop
    /// (``StageRunner/releaseDue(checkInterval:)``).
    private mutating func foldReleased(
        logic: Logic, now: ContinuousClock.Instant, predicting: Bool = false, into output: inout TaskOutput
    ) {
        var touched: Set<String> = []
        var forced = 0
        let lateBefore = merge.foldedLate
        for next in merge.release(now: now, predicting: predicting, forced: &forced, waited: &output.eventTimeWaits) {
            fold(next, logic: logic, touched: &touched, into: &output)
        }
        output.releasedByMaximumWait += forced
        output.foldedLate += merge.foldedLate - lateBefore
        if let eventTime = logic.now(state), !touched.isEmpty || anchor == nil { anchor = (eventTime, now) }
        finish(touched: touched, logic: logic)
    }

    /// This task's progress as the readers of `topic` are told it: for the stage's output (stage 1),
    /// how far its messages have come; for its repartition topic, how far the inputs it forwards from
    /// have. `instanceClock` is the event clock of the instance's busiest task, in microseconds.
    func progressMark(for topic: String, logic: Logic, instanceClock: Int64?, now: ContinuousClock.Instant)
        -> ProgressMark
    {
        if topic == logic.repartitionTopic {
            return merge.mark(
                of: logic.externalTopics, held: nil, includingBuffered: false, instanceClock: instanceClock, now: now)
        }
        return merge.mark(
            of: logic.markedInputs, held: logic.earliestRelease(state)?.milliseconds, instanceClock: instanceClock,
            now: now)
    }

    /// Adds the `notify-mark` header to the last of the stage's output records of `topic` in each
    /// partition (each record's partition set, below `partitions`): it says the earliest time of any
    /// record after it (the later ones of the batch, in whatever partition, then `mark`). The records
    /// before it in its partition go in the same send, and their reader folds nothing of theirs
    /// before it has read the last, so a mark on each would say nothing more and cost a header to
    /// write and to read per record. The records the stage makes carry their event time as
    /// timestamp; forwarded ones carry none.
    func stampMarks(_ records: inout [OutgoingRecord], topic: String, partitions: Int32, mark: ProgressMark) {
        var after = mark
        var stamped = [Bool](repeating: false, count: Int(partitions))
        for index in records.indices.reversed() where records[index].topic == topic {
            if let target = records[index].partition.map(Int.init), target < stamped.count, !stamped[target] {
                stamped[target] = true
                records[index].headers.append(
                    KafkaHeader(name: ProgressMark.header, value: after.headerValue(task: partition)))
            }
            if let time = records[index].timestampMilliseconds {
                switch after {
                case .at(let later): after = .at(min(later, time))
                case .idle, .finished: after = .at(time)
                }
            }
        }
    }

    /// Folds the current contents of table topic `topic` (read at assignment) straight into the state.
    /// The dead letters of its bad records in this partition are kept (``tableDeadLetters``) and
    /// written when the live consumer reads them, so that a record is dead-lettered once whoever owned
    /// the partition before and wherever its commit stands: one below the group's committed offset was
    /// dead-lettered when it was read then. Bad records from other partitions are their readers': the
    /// live consumer forwards them to this task through the repartition topic.
    mutating func restoreTable(_ topic: String, _ records: [KafkaRecord], logic: Logic, limits: RecordLimits)
        -> TaskOutput
    {
        var output = TaskOutput()
        var touched: Set<String> = []
        // A record of this partition that belongs to another key's partition is its owner's, which
        // reads it at its own restore (and the live consumer forwards it).
        for record in records where record.partition != partition || forwarding(record, logic: logic) == nil {
            if let input = decode(record, logic: logic, limits: limits, into: &output) {
                fold(input, logic: logic, touched: &touched, into: &output)
            }
        }
        var letters: [Int64: DeadLetter] = [:]
        for letter in output.deadLetters where letter.sourcePartition == partition {
            letters[letter.sourceOffset] = letter
        }
        tableDeadLetters[topic] = letters
        output.deadLetters = []
        finish(touched: touched, logic: logic)
        return output
    }

    /// The dead letter the table's restore found for `record`, once, forgetting those of offsets the
    /// live consumer has passed.
    private mutating func tableDeadLetter(at record: KafkaRecord) -> DeadLetter? {
        guard record.partition == partition, var letters = tableDeadLetters[record.topic], !letters.isEmpty else {
            return nil
        }
        let letter = letters.removeValue(forKey: record.offset)
        letters = letters.filter { $0.key > record.offset }
        tableDeadLetters[record.topic] = letters
        return letter
    }

    /// Lets wall-clock time work while input is quiet: inputs read to their end move their floors,
    /// records that waited out the merge's maximum wait are folded, and event time advances by the
    /// wall-clock time since the last record (never past a record still buffered), so identity waits
    /// end.
    mutating func advanceClock(logic: Logic, lag: [TopicPartition: Int64]? = nil, now wall: ContinuousClock.Instant)
        -> TaskOutput
    {
        var output = TaskOutput()
        noteLag(lag, logic: logic, now: wall)
        foldReleased(logic: logic, now: wall, into: &output)
        guard let anchor, (wall - anchor.wall).milliseconds > 0 else { return output }
        var time = anchor.eventTime.adding(milliseconds: (wall - anchor.wall).milliseconds)
        if let earliest = merge.earliest, earliest <= time.milliseconds { time = EventTime(milliseconds: earliest - 1) }
        guard logic.now(state).map({ time > $0 }) ?? true else { return output }
        var touched: Set<String> = []
        apply(logic.fold(&state, logic.clock(time)), logic: logic, touched: &touched, into: &output)
        finish(touched: touched, logic: logic)
        return output
    }

    /// Notes which inputs have records waiting in Kafka (`lag`, from the consumer: a partition it has
    /// no figure for yet counts as lagging; `nil`, nothing known: every input counts as read). A
    /// batch tells it to the tasks it has records of; its runner tells it to the others.
    mutating func noteLag(_ lag: [TopicPartition: Int64]?, logic: Logic, now: ContinuousClock.Instant) {
        for topic in logic.inputTopics {
            let lagging =
                lag.map { $0[TopicPartition(topic: topic, partition: partition)].map { $0 > 0 } ?? true } ?? false
            merge.noteLag(topic, lagging: lagging, now: now)
        }
    }

    /// Takes records every task hears (identities), to be folded in event-time order with this
    /// partition's records; `source` names the input of each (its topic and partition), `lagging`
    /// says which of those inputs have records waiting in Kafka beyond these.
    mutating func hear(
        _ records: [KafkaRecord], source: (KafkaRecord) -> String, lagging: [String: Bool], logic: Logic,
        limits: RecordLimits,
        now: ContinuousClock.Instant = .now
    ) -> TaskOutput {
        var output = TaskOutput()
        for record in records {
            if let input = decode(record, logic: logic, limits: limits, into: &output),
                merge.add(input, source: source(record), now: now)
            {
                output.readLate[record.topic, default: 0] += 1
            }
        }
        for (source, lagging) in lagging { merge.noteLag(source, lagging: lagging, now: now) }
        foldReleased(logic: logic, now: now, into: &output)
        return output
    }

    /// Puts back a changelog record.
    mutating func restore(key: String, value: ChangelogValue, logic: Logic) throws {
        try logic.restore(&state, key: key, value: value.entry, recentEventIds: value.recent)
        progress[key] = KeyProgress(applied: value.applied)
    }

    /// Reads a record into an input of the stage, or sends it to the dead-letter topic with the reason;
    /// nil also for a record whose effects the restored state holds already.
    private mutating func decode(
        _ record: KafkaRecord, decodedAhead: Result<InputEvent, EventDecodingError>? = nil, logic: Logic,
        limits: RecordLimits, into output: inout TaskOutput
    ) -> DecodedRecord? {
        let partitioned = logic.inputTopics.contains(record.topic)
        var topic = record.topic
        if record.topic == logic.repartitionTopic {
            guard let original = record.headers.string(for: RepartitionHeader.topic),
                logic.externalTopics.contains(original)
            else {
                output.deadLetters.append(
                    DeadLetter(
                        record, reason: "\(record.topic): no \(RepartitionHeader.topic) header naming an input topic"))
                return nil
            }
            topic = original
            noteForwarded(record, topic: original, into: &output)
        } else if record.key == nil, logic.externalTopics.contains(record.topic) {
            output.deadLetters.append(
                DeadLetter(
                    record,
                    reason: """
                        \(record.topic): the record has no key; producers must key it as Schemas/topics.json says, so that \
                        one task sees all of a key's records in order
                        """))
            return nil
        } else if !forwardedFrom.isEmpty, let key = record.key,
            forwardedFrom["\(record.topic)\u{0}\(String(decoding: key, as: UTF8.self))"] != nil
        {
            output.spreadKeys.insert(record.topic)  // Came forwarded before, and now straight: a random partitioner.
        }
        if partitioned, let key = record.key.map({ String(decoding: $0, as: UTF8.self) }),
            let last = progress[key]?.offset(of: record.topic), record.offset <= last
        {
            return nil  // Its effects are in the restored state already.
        }
        guard record.value.count <= limits.maxRecordBytes else {
            output.deadLetters.append(
                DeadLetter(
                    record,
                    reason: "record of \(record.value.count) bytes is over the limit of \(limits.maxRecordBytes) bytes")
            )
            return nil
        }
        let event: InputEvent
        switch decodedAhead ?? ConsumedRecord.decoding(record.value, topic: topic) {
        case .success(let decoded): event = decoded
        case .failure(let error):
            output.deadLetters.append(DeadLetter(record, reason: error.description))
            return nil
        }
        guard let input = logic.input(from: event) else {
            output.deadLetters.append(
                DeadLetter(record, reason: "\(topic): not an input of the \(logic.name.rawValue) stage"))
            return nil
        }
        return DecodedRecord(
            record: Self.kept(record, logic: logic), event: event, input: input, partitioned: partitioned,
            waitingId: logic.waitingId(of: event))
    }

    /// What the merge keeps of a record it holds until its turn (under a backlog, stage 2 holds a large
    /// part of it): the progress marks and sequence numbers in its headers are read already, and its
    /// value is decoded, needed again only if the fold may refuse the input (its dead letter carries the
    /// value). Its other headers stay: the fold's span continues the trace they carry.
    static func kept(_ record: KafkaRecord, logic: Logic) -> KafkaRecord {
        var kept = record
        if kept.headers.contains(where: { $0.name == ProgressMark.header || $0.name == LocalProgressBoard.header }) {
            kept.headers.removeAll { $0.name == ProgressMark.header || $0.name == LocalProgressBoard.header }
        }
        if !logic.foldMayReject { kept.value = [] }
        return kept
    }

    /// Notes the partition a forwarded record came from: a key that comes from two is spread at random.
    private mutating func noteForwarded(_ record: KafkaRecord, topic: String, into output: inout TaskOutput) {
        guard let key = record.key, let source = record.headers.string(for: RepartitionHeader.source),
            let slash = source.lastIndex(of: "/"), let at = source.lastIndex(of: "@"),
            let partition = Int32(source[source.index(after: slash)..<at])
        else { return }
        let name = "\(topic)\u{0}\(String(decoding: key, as: UTF8.self))"
        if forwardedFrom.count > 10_000 { forwardedFrom = [:] }
        if let previous = forwardedFrom.updateValue(partition, forKey: name), previous != partition {
            output.spreadKeys.insert(topic)
        }
    }

    private mutating func fold(
        _ decoded: DecodedRecord, logic: Logic, touched: inout Set<String>, into output: inout TaskOutput
    ) {
        let (record, key) = (decoded.record, decoded.key)
        let started = tracing.startTime()
        let step = logic.fold(&state, decoded.input)
        if let rejection = step.rejection {
            output.deadLetters.append(DeadLetter(record, reason: rejection))
        }
        if decoded.partitioned {
            // Bookkeeping of this partition's own input (not of records every task hears).
            progress[key, default: KeyProgress()].noteApplied(record.offset, of: record.topic)
            touched.insert(key)
        }
        if let id = decoded.waitingId, logic.waiting(in: state, key: key).contains(id) {
            waiting[id] = Position(key: key, topic: record.topic, offset: record.offset)
            output.identityWaits += 1
        }
        // Outputs continue the input's trace (or start one): see ``RecordTracing``.
        let span = foldSpan(of: record, made: step, logic: logic, startedAt: started)
        apply(step, trace: span, logic: logic, touched: &touched, into: &output)
        span?.end()
    }

    /// The span of the fold of `record` that made `step`, when it made records (table updates, restored
    /// at every assignment, make none, and no span). Off, no span: the trace the outputs continue.
    private func foldSpan(
        of record: KafkaRecord, made step: StageStep, logic: Logic, startedAt start: DefaultTracerClock.Instant?
    ) -> RecordSpan? {
        guard !step.outputs.isEmpty else { return nil }
        let span = tracing.startSpan(logic.name.foldSpanName, continuing: record.headers, at: start)
        if tracing.isOn {
            span.set("messaging.system", "kafka")
            span.set("messaging.destination.name", record.topic)
            span.set("messaging.destination.partition.id", "\(record.partition)")
            span.set("messaging.kafka.offset", Int(record.offset))
        }
        return span
    }

    /// Adds what a fold made to `output`. Its records continue `trace`, the trace of the record
    /// that made them; those made by no record (released by time) start a trace each, or (tracing on)
    /// one for the fold.
    private func apply(
        _ step: StageStep, trace: RecordSpan? = nil, logic: Logic, touched: inout Set<String>,
        into output: inout TaskOutput
    ) {
        if let trace {
            for record in step.outputs { output.records.append(record.traced(trace)) }
        } else if tracing.isOn, !step.outputs.isEmpty {
            let span = tracing.startSpan(logic.name.foldSpanName, continuing: [])
            span.set("notify.fold.input", "clock")
            for record in step.outputs { output.records.append(record.traced(span)) }
            span.end()
        } else {
            for record in step.outputs { output.records.append(record.traced(TraceContext.start())) }
        }
        output.commands += step.commands
        output.decisions += step.decisions
        output.identityTimeouts += step.unresolvedIdentities
        touched.formUnion(step.touchedKeys)
    }

    /// Forgets finished waits of the touched keys and marks them unsaved.
    private mutating func finish(touched: Set<String>, logic: Logic) {
        for key in touched where !waiting.isEmpty {
            let stillWaiting = Set(logic.waiting(in: state, key: key))
            waiting = waiting.filter { $0.value.key != key || stillWaiting.contains($0.key) }
        }
        unsaved.formUnion(touched)
    }

    /// What `keys` have applied, as a restart may skip it: each offset lowered below the key's oldest
    /// record still in the merge (read, not folded: a restart reads it again and must fold it), and
    /// dropped when that leaves nothing below.
    private func appliedOffsets(
        of keys: some Sequence<String>, buffered: EventTimeMerge<Logic.Input>.BufferedOffsets
    ) -> [String: KeyProgress] {
        var result: [String: KeyProgress] = [:]
        for key in keys {
            guard var applied = progress[key] else { continue }
            if let oldest = buffered.byKey[key] { applied.lower(below: oldest) }
            result[key] = applied
        }
        return result
    }

    /// The changelog of the keys changed since the last save (one record per key, however
    /// often it changed) and the offsets it makes safe to commit, unless the last save gave
    /// them already: below the oldest record still waiting or buffered.
    mutating func save(logic: Logic) -> TaskOutput {
        var output = TaskOutput()
        let buffered = merge.bufferedOffsets()
        if !unsaved.isEmpty {
            // Copies of the state and bookkeeping as they are now (copy-on-write: the next fold
            // copies what it changes), encoded later.
            let (keys, state, progress, partition) = (
                unsaved.sorted(), state, appliedOffsets(of: unsaved, buffered: buffered), partition
            )
            output.changelog.append(
                ChangelogSnapshot {
                    keys.map { key in
                        let value = ChangelogValue(
                            entry: logic.snapshot(state, key: key), applied: progress[key]?.applied ?? [:],
                            recent: logic.recentEventIds(state, key: key))
                        return OutgoingRecord(
                            topic: logic.changelogTopic, key: Array(key.utf8), value: value.encoded(),
                            partition: partition)
                    }
                })
        }
        unsaved = []
        var oldest: [String: Int64] = [:]
        for position in waiting.values where position.offset < oldest[position.topic] ?? .max {
            oldest[position.topic] = position.offset
        }
        for (topic, offset) in buffered.byTopic where offset < oldest[topic] ?? .max {
            oldest[topic] = offset
        }
        for (topic, next) in processed {
            output.offsets[TopicPartition(topic: topic, partition: partition)] = min(next, oldest[topic] ?? next)
        }
        if output.offsets == savedOffsets {
            output.offsets = [:]  // Stored already.
        } else {
            savedOffsets = output.offsets
        }
        return output
    }
}

/// What a task has applied to one key of its own input: kept with the key's state in its changelog
/// (see ``ChangelogValue``), so input read again after a restart is not applied twice. (An event that
/// comes again at another offset is the core's to recognise: see ``RecentEventIds``.)
struct KeyProgress: Sendable {
    /// Per input topic, the highest offset of a record of the key applied (in a changelog record: the
    /// offset up to which every record of the key has been applied; see ``PartitionTask/save(logic:)``).
    /// A key has records of a topic or three, looked up twice per record: a list searched in order,
    /// whose topic names are mostly the consumer's own strings (equal by identity), costs less than
    /// a hash table per key.
    private var offsets: [(topic: String, offset: Int64)] = []

    init(applied: [String: Int64] = [:]) {
        offsets = applied.sorted { $0.key < $1.key }.map { ($0.key, $0.value) }
    }

    /// Input topic → the offset, as the changelog keeps it.
    var applied: [String: Int64] {
        var applied = [String: Int64](minimumCapacity: offsets.count)
        for (topic, offset) in offsets { applied[topic] = offset }
        return applied
    }

    /// Lowers each offset to below the offset `oldest` gives its topic (the key's oldest record still
    /// read and not folded), where it is not below already; an offset with nothing left below goes.
    /// Done in place: a save asks it of every key it writes, and a round trip through ``applied``
    /// cost six allocations per key.
    mutating func lower(below oldest: [String: Int64]) {
        offsets = offsets.compactMap { entry in
            guard let first = oldest[entry.topic], entry.offset >= first else { return entry }
            return first > 0 ? (entry.topic, first - 1) : nil
        }
    }

    /// The offset of `topic`, if a record of it was applied.
    func offset(of topic: String) -> Int64? {
        offsets.first { $0.topic == topic }?.offset
    }

    /// Notes a record of `topic` at `offset` as applied: the highest counts, since records are
    /// folded in event-time order, not in the order of their offsets.
    mutating func noteApplied(_ offset: Int64, of topic: String) {
        guard let index = offsets.firstIndex(where: { $0.topic == topic }) else {
            offsets.append((topic, offset))
            return
        }
        offsets[index].offset = max(offsets[index].offset, offset)
    }
}

/// A record read into an input of its stage, with what the merge and the fold need of its event
/// (not the event itself: the input holds its contents already).
///
/// A class: a record is moved several times on its way to the fold (into the merge, out of it in
/// order, into the fold), and under a backlog the merge's arrays hold thousands per task. As a
/// struct of a few hundred bytes, each of those moves copied it, and each growth of an array
/// copied them all into fresh pages; as a reference, each moves 8 bytes.
final class DecodedInput<Input: Sendable>: Sendable {
    let record: KafkaRecord
    let input: Input
    /// Whether the record is of the task's own partition (not one every task hears).
    let partitioned: Bool
    /// Its place in the fold order; its `key` is the event's key.
    let order: EventOrder
    /// The id under which the event may wait in the state (see ``StageLogic/waitingId(of:)``).
    let waitingId: String?

    init(record: KafkaRecord, event: InputEvent, input: Input, partitioned: Bool, waitingId: String? = nil) {
        self.record = record
        self.input = input
        self.partitioned = partitioned
        self.order = event.order
        self.waitingId = waitingId
    }

    /// The event's key.
    var key: String { order.key }
}

/// Limits on input records.
struct RecordLimits: Sendable {
    /// Larger records go to the dead-letter topic unread.
    var maxRecordBytes: Int = 1_000_000
}
