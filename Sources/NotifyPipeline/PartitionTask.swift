import Kafka
import NotifyCore

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

    var isEmpty: Bool { records.isEmpty && changelog.isEmpty && offsets.isEmpty }

    mutating func append(_ other: TaskOutput) {
        if records.isEmpty { records = other.records } else { records += other.records }  // Usually one partition: no copy.
        changelog += other.changelog
        offsets.merge(other.offsets) { max($0, $1) }
        commands += other.commands
        decisions += other.decisions
        deadLetters += other.deadLetters
        identityWaits += other.identityWaits
        identityTimeouts += other.identityTimeouts
    }

    /// The changelog records of every save in this output, encoded now.
    func changelogRecords() -> [OutgoingRecord] {
        changelog.flatMap { $0.records() }
    }
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
/// Records are folded one at a time in the order ``mergedByTime(_:topicOrder:)``
/// gives; nothing here does I/O.
struct PartitionTask<Logic: StageLogic>: Sendable {
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
    /// Side-input records waiting for the driving topic to reach their time (see ``StageAlignment``), in time order.
    var aligning: [(record: KafkaRecord, arrived: ContinuousClock.Instant)] = []
    /// Keys changed since their last changelog record (see ``save(logic:)``).
    var unsaved: Set<String> = []
    /// The offsets the last save gave (forgotten when the task is assigned again).
    var savedOffsets: [TopicPartition: Int64] = [:]

    init(partition: Int32, state: Logic.State) {
        self.partition = partition
        self.state = state
    }

    /// Folds the records of this partition, in order, and says what to send.
    mutating func process(_ records: [KafkaRecord], logic: Logic, limits: RecordLimits) -> TaskOutput {
        var output = TaskOutput()
        var touched: Set<String> = []
        let now = ContinuousClock.now
        for record in records {
            processed[record.topic] = record.offset + 1
            guard let alignment = logic.alignment else {
                fold(record, logic: logic, limits: limits, touched: &touched, into: &output)
                continue
            }
            if record.topic == alignment.drivingTopic {
                release(upTo: record.timestampMilliseconds ?? .max, logic: logic, limits: limits, touched: &touched, into: &output)
                fold(record, logic: logic, limits: limits, touched: &touched, into: &output)
            } else {
                align(record, arrived: now)
            }
        }
        if let eventTime = logic.now(state) { anchor = (eventTime, now) }
        finish(touched: touched, logic: logic)
        return output
    }

    /// Folds the current contents of a table topic (read at assignment) straight into the state.
    /// Unreadable records are left for the consumer, which sends them to the dead-letter topic.
    mutating func restoreTable(_ records: [KafkaRecord], logic: Logic, limits: RecordLimits) -> TaskOutput {
        var output = TaskOutput()
        var touched: Set<String> = []
        for record in records {
            fold(record, logic: logic, limits: limits, touched: &touched, into: &output)
        }
        output.deadLetters = []
        finish(touched: touched, logic: logic)
        return output
    }

    /// Folds the side-input records at or before `time` (all of them for `.max`).
    private mutating func release(
        upTo time: Int64, logic: Logic, limits: RecordLimits, touched: inout Set<String>, into output: inout TaskOutput
    ) {
        let due = aligning.firstIndex { ($0.record.timestampMilliseconds ?? 0) > time } ?? aligning.endIndex
        guard due > 0 else { return }
        let released = aligning[..<due]
        aligning.removeFirst(due)
        for (record, _) in released {
            fold(record, logic: logic, limits: limits, touched: &touched, into: &output)
        }
    }

    /// Puts a side-input record among those waiting, in time order (after those of the same time).
    private mutating func align(_ record: KafkaRecord, arrived: ContinuousClock.Instant) {
        let time = record.timestampMilliseconds ?? 0
        guard let last = aligning.last, (last.record.timestampMilliseconds ?? 0) > time else {
            aligning.append((record, arrived))  // The usual case: not older than the newest waiting.
            return
        }
        var low = 0
        var high = aligning.count
        while low < high {
            let middle = (low + high) / 2
            if (aligning[middle].record.timestampMilliseconds ?? 0) > time { high = middle } else { low = middle + 1 }
        }
        aligning.insert((record, arrived), at: low)
    }

    /// Advances event time by the wall-clock time since the last record, so
    /// waits end even while the input is quiet.
    /// Side-input records that waited out the alignment are folded first.
    mutating func advanceClock(logic: Logic, limits: RecordLimits, now wall: ContinuousClock.Instant) -> TaskOutput {
        var output = TaskOutput()
        var touched: Set<String> = []
        if let alignment = logic.alignment,
           let lastDue = aligning.lastIndex(where: { wall - $0.arrived >= alignment.maximumWait }) {
            release(upTo: aligning[lastDue].record.timestampMilliseconds ?? 0, logic: logic, limits: limits, touched: &touched, into: &output)
            if let eventTime = logic.now(state) { anchor = (eventTime, wall) }
        }
        guard let anchor, (wall - anchor.wall).milliseconds > 0 else {
            finish(touched: touched, logic: logic)
            return output
        }
        let milliseconds = (wall - anchor.wall).milliseconds
        apply(logic.fold(&state, logic.clock(anchor.eventTime.adding(milliseconds: milliseconds))), touched: &touched, into: &output)
        finish(touched: touched, logic: logic)
        return output
    }

    /// Takes a record every task hears (an identity), to be folded in event-time order with this
    /// partition's records (see ``StageAlignment``), or at once when the stage does not align.
    mutating func hear(_ record: KafkaRecord, logic: Logic, limits: RecordLimits) -> TaskOutput {
        guard logic.alignment != nil else {
            var output = TaskOutput()
            var touched: Set<String> = []
            fold(record, logic: logic, limits: limits, touched: &touched, into: &output)
            finish(touched: touched, logic: logic)
            return output
        }
        align(record, arrived: .now)
        return TaskOutput()
    }

    /// Puts back a changelog record.
    mutating func restore(key: String, value: ChangelogValue, logic: Logic) throws {
        try logic.restore(&state, key: key, value: value.entry)
        progress[key] = KeyProgress(applied: value.applied, recent: value.recent)
    }

    private mutating func fold(
        _ record: KafkaRecord, logic: Logic, limits: RecordLimits, touched: inout Set<String>, into output: inout TaskOutput
    ) {
        let partitioned = logic.inputTopics.contains(record.topic)
        if partitioned, let key = record.key.map({ String(decoding: $0, as: UTF8.self) }),
           let last = progress[key]?.applied[record.topic], record.offset <= last {
            return  // Its effects are in the restored state already.
        }
        guard record.value.count <= limits.maxRecordBytes else {
            output.deadLetters.append(DeadLetter(record, reason: "record of \(record.value.count) bytes is over the limit of \(limits.maxRecordBytes) bytes"))
            return
        }
        let event: InputEvent
        do {
            event = try InputEvent.decode(topic: record.topic, value: record.value)
        } catch {
            output.deadLetters.append(DeadLetter(record, reason: error.description))
            return
        }
        if partitioned, progress[event.key]?.recent.contains(event.id) == true {
            return  // The same event again (re-emitted upstream after a crash): applied already.
        }
        guard let input = logic.input(from: event) else {
            output.deadLetters.append(DeadLetter(record, reason: "\(record.topic): not an input of the \(logic.name.rawValue) stage"))
            return
        }
        let step = logic.fold(&state, input)
        if let rejection = step.rejection {
            output.deadLetters.append(DeadLetter(record, reason: rejection))
        }
        if partitioned {
            // Bookkeeping of this partition's own input (not of records every task hears).
            progress[event.key, default: KeyProgress()].record(topic: record.topic, offset: record.offset, eventId: event.id)
            touched.insert(event.key)
        }
        if let id = logic.waitingId(of: event), logic.waiting(in: state, key: event.key).contains(id) {
            waiting[id] = Position(key: event.key, topic: record.topic, offset: record.offset)
            output.identityWaits += 1
        }
        // Outputs continue the input's trace (or start one): see ``TraceContext``.
        apply(step, trace: TraceContext(headers: record.headers) ?? TraceContext.start(), touched: &touched, into: &output)
    }

    /// Adds what a fold made to `output`. Its records continue `trace`, the trace of the record
    /// that made them; those made by no record (released by time) start a trace each.
    private func apply(_ step: StageStep, trace: TraceContext? = nil, touched: inout Set<String>, into output: inout TaskOutput) {
        for record in step.outputs { output.records.append(record.traced(trace?.child() ?? .start())) }
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

    /// The changelog of the keys changed since the last save (one record per key, however
    /// often it changed) and the offsets it makes safe to commit, unless the last save gave
    /// them already: below the oldest record still waiting or aligning.
    mutating func save(logic: Logic) -> TaskOutput {
        var output = TaskOutput()
        if !unsaved.isEmpty {
            // Copies of the state and bookkeeping as they are now (copy-on-write: the next fold
            // copies what it changes), encoded later.
            let (keys, state, progress, partition) = (unsaved.sorted(), state, progress, partition)
            output.changelog.append(ChangelogSnapshot {
                keys.map { key in
                    let value = ChangelogValue(entry: logic.snapshot(state, key: key), applied: progress[key]?.applied ?? [:],
                                               recent: progress[key]?.recent ?? [])
                    return OutgoingRecord(topic: logic.changelogTopic, key: Array(key.utf8), value: value.encoded(), partition: partition)
                }
            })
        }
        unsaved = []
        var oldest: [String: Int64] = [:]
        for position in waiting.values where position.offset < oldest[position.topic] ?? .max {
            oldest[position.topic] = position.offset
        }
        for index in aligning.indices where aligning[index].record.offset < oldest[aligning[index].record.topic] ?? .max {
            oldest[aligning[index].record.topic] = aligning[index].record.offset
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
/// (see ``ChangelogValue``), so input read again after a restart is not applied twice.
struct KeyProgress: Sendable {
    /// Input topic → offset of the last record applied.
    var applied: [String: Int64] = [:]
    /// Ids of the last events applied, oldest first (at most ``recentLimit``).
    var recent: [String] = []
    /// How many event ids are remembered to recognise an event that comes again.
    static let recentLimit = 32

    /// Notes the record at `offset` of `topic`, event `eventId`, as applied.
    mutating func record(topic: String, offset: Int64, eventId: String) {
        applied[topic] = offset
        recent.append(eventId)
        if recent.count > Self.recentLimit { recent.removeFirst() }
    }
}

/// Limits on input records.
struct RecordLimits: Sendable {
    /// Larger records go to the dead-letter topic unread.
    var maxRecordBytes: Int = 1_000_000
}

extension Duration {
    /// Whole milliseconds.
    public var milliseconds: Int64 {
        components.seconds * 1000 + components.attoseconds / 1_000_000_000_000_000
    }
}
