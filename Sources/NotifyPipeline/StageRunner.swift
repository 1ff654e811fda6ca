import Logging
import NotifyCore
import NotifyKafka
import NotifyRecords

/// Runs one stage's tasks on Kafka: folds each consumed batch through the
/// tasks of its partitions and sends what they made; every ``saveInterval``
/// (and before partitions are given up) it writes the changelog of the keys
/// changed since the last save, then stores the input offsets, in that order.
///
/// Sending is pipelined (up to ``SaveChain/maxBatchesInFlight`` batches await their
/// acknowledgements while the next ones are folded, and their acknowledgements
/// overlap; saves have a window of their own and their changelog is encoded off
/// this actor, from the state as it was at the save, so a fold never waits for a
/// changelog), but a save's changelog follows the acknowledgement of the outputs
/// of every batch before it, and its offsets that of its changelog and of every
/// earlier save's, so a crash at any moment loses nothing: it repeats at most
/// the work since the last save, with the same command ids and bytes.
actor StageRunner<Logic: StageLogic> {
    let logic: Logic
    private let producer: KafkaProducer
    private let restorer: ChangelogRestorer
    private let observer: PipelineObserver
    private let logger: Logger
    let limits: RecordLimits
    /// Whether the tasks' folds record spans.
    private let tracing: RecordTracing
    private let deadLetters: DeadLetterWriter
    /// How long changes gather before the changelog is written; a key changed many times meanwhile
    /// gets one record.
    private let saveInterval: Duration
    /// When the next task's turn to save comes.
    private var nextSave = ContinuousClock.now
    /// The partition whose task saved last.
    private var lastSaved: Int32 = -1
    /// Whether a batch came since the last tick.
    private var processedSinceTick = false
    private var consumer: KafkaConsumer?
    private var tasks: [Int32: PartitionTask<Logic>] = [:]
    /// Per input every task hears (a partition of chat.identities), whether records of it wait in
    /// Kafka beyond those heard, as its follower last said: a task assigned or taken back starts
    /// from it (see ``expectBroadcast(of:partitions:)``).
    private var heardLag: [String: Bool] = [:]
    /// The latest record of each key heard from a topic every task hears (chat.identities) since the
    /// instance loaded it, by partition: a task assigned or taken back hears them, folded in event
    /// time with its own records, so that it knows what the tasks that heard them as they came know.
    /// (A key changed twice since the load is heard with its latest change only.)
    private var heardRecords: [TopicPartition: [[UInt8]: KafkaRecord]] = [:]
    /// The partitions of the stage's co-partitioned inputs (which task owns a key).
    private let partitionCount: Int32
    /// Input topics whose misplaced records, and whose keys spread over partitions, have been warned about.
    private var warned: Set<String> = []
    /// The event-time merge a new task starts with (see ``EventTimeMerge``).
    private let merge: EventTimeMerge<Logic.Input>
    /// The topics this stage's tasks send their progress marks to, with their partition counts: its
    /// repartition topic (read by its own tasks) and, for stage 1, notify.fanout (read by stage 2).
    private let markTargets: [(topic: String, partitions: Int32)]
    /// The mark each task last sent through Kafka, by topic, partition of it, and task.
    private var announced: [String: [Int32: [Int32: ProgressMark]]] = [:]
    /// Every task's marks as ``publishMarks(now:instanceClock:)`` last worked them out, per mark
    /// target (in the order of ``markTargets``), in task order: kept and filled again in place, as
    /// they are worked out after every batch and every ``PipelineSettings/localMarkInterval``.
    private var taskMarks: [[(task: Int32, mark: ProgressMark)]] = []
    /// Tasks given up, kept with the changelog position they were restored to, in case they come back.
    private var standby: [Int32: (task: PartitionTask<Logic>, changelogPosition: Int64)] = [:]
    private var changelogPositions: [Int32: Int64] = [:]
    /// The sends in flight, each step chained to the same step of the send before.
    private var saveChain = SaveChain<PendingDeliveries>(maxBatchesInFlight: 8, maxSavesInFlight: 4)
    /// When the tasks last did something that moves their marks otherwise than the wall clock does: a
    /// batch, a record heard, records released, a lag seen, a task taken or given up (``isIdle(now:)``).
    private var lastActivity = ContinuousClock.now
    /// Wakes the release loop when records may go sooner than it planned (``releaseDue(checkInterval:)``).
    nonisolated let releaseAlarm = ReleaseAlarm()
    /// When the release loop looks again, as ``releaseDue(checkInterval:)`` last said; nil: not until
    /// its alarm rings.
    private var plannedRelease: ContinuousClock.Instant?

    init(
        logic: Logic, producer: KafkaProducer, restorer: ChangelogRestorer, observer: PipelineObserver,
        limits: RecordLimits, deadLetters: DeadLetterWriter, saveInterval: Duration, merge: EventTimeMerge<Logic.Input>,
        partitionCount: Int32, markPartitions: Int32?, tracing: RecordTracing = .off, logger: Logger
    ) {
        self.deadLetters = deadLetters
        self.tracing = tracing
        var markTargets = [(topic: logic.repartitionTopic, partitions: partitionCount)]
        if let markPartitions, let output = logic.outputTopic { markTargets.append((output, markPartitions)) }
        self.markTargets = markTargets
        self.logic = logic
        self.partitionCount = partitionCount
        self.merge = merge
        self.saveInterval = saveInterval
        self.producer = producer
        self.restorer = restorer
        self.observer = observer
        self.limits = limits
        self.logger = logger
    }

    /// Notes that the tasks' marks may have moved, and that records may wait in their merges: the
    /// release loop looks again now.
    private func noteActivity(at now: ContinuousClock.Instant) {
        lastActivity = now
        releaseAlarm.ring()
    }

    /// Rings the release loop if a task of `partitions` has records waiting that may go before the
    /// loop planned to look: its merge foresaw so (a batch folds what it can and foresees the rest),
    /// or could not foresee when (a floor that only records or marks move holds them).
    private func ringIfSooner(_ partitions: some Sequence<Int32>) {
        for partition in partitions {
            guard let (waiting, release) = withTask(partition, { ($0.merge.earliest != nil, $0.merge.nextRelease) }),
                waiting
            else { continue }
            guard let planned = plannedRelease, let release, release >= planned else {
                return releaseAlarm.ring()
            }
        }
    }

    /// Tells the observer how long this actor has worked since `started` (``PipelineObserver/onBusy``).
    private func noteBusy(since started: ContinuousClock.Instant) {
        observer.onBusy(logic.name, .now - started)
    }

    /// The consumer whose offsets this runner stores.
    func attach(_ consumer: KafkaConsumer) {
        self.consumer = consumer
    }

    /// Folds a batch (its events decoded ahead by the caller, see ``ConsumedRecord``) and queues what
    /// it made. Every task learns from the consumer's lag (``KafkaConsumer/lag()``, asked now unless
    /// `lag` gives it) which of its inputs have records waiting.
    func process(_ batch: consuming [ConsumedRecord], lag given: [TopicPartition: Int64]? = nil) async throws {
        let started = ContinuousClock.now
        let consumed = batch.compactMap { consumed in
            let record = consumed.record
            return !record.value.isEmpty || PartitionTask<Logic>.marks(of: record).isEmpty ? record : nil
        }
        // Each record moved to its partition's list, and each list moved to its task: copied, a record's
        // event would cost a retain and a release per field.
        var byPartition: [Int32: [ConsumedRecord]] = [:]
        var batch = batch
        batch.withUnsafeMutableBufferPointer { $0.reverse() }
        while let next = batch.popLast() {
            let partition = next.record.partition
            // Without `consume`, the record was copied into the list and the popped one destroyed.
            byPartition[partition, default: []].append(consume next)
        }
        var output = TaskOutput()
        let lag = given ?? (try? consumer?.lag())
        let now = ContinuousClock.now
        var clock = InstanceClock()
        let partitions = byPartition.keys.sorted()
        for partition in partitions {
            var records = byPartition.removeValue(forKey: partition)!
            guard tasks.keys.contains(partition) else {
                logger.debug("Records of a partition given up are dropped", metadata: ["partition": "\(partition)"])
                continue
            }
            output.append(
                work(partition, now: now, clock: &clock) {
                    var taken: [ConsumedRecord] = []
                    swap(&taken, &records)
                    return $0.process(taken, logic: logic, limits: limits, lag: lag, now: now)
                })
        }
        // The tasks the batch has no records of learn its lag too: their records may wait in the
        // consumer, fetched and not handed over yet. A task that took its inputs for read to their
        // end marked itself idle at the instance's clock, and stage 2 folded a burst's records of
        // the tasks in the first batch before those of the others.
        if let lag {
            var inBatch = LocalProgressBoard.TaskSet(capacity: Int(partitionCount))
            for partition in partitions { inBatch.insert(partition) }
            forEachTask { partition, task in
                if !inBatch.contains(partition) { task.noteLag(lag, logic: logic, now: now) }
            }
        }
        // A batch may move a task's marks without making records (an input it lagged on is now read
        // to its end): the readers in this instance learn it now, not at the next local interval. With
        // the instance's clock as the tasks that made records saw it (computed once per batch: it
        // looks at every task).
        if merge.localMarks != nil { publishMarks(now: now, instanceClock: clock.value ?? instanceClock(now: now)) }
        lastActivity = now
        ringIfSooner(partitions)
        observer.consumed(consumed)
        processedSinceTick = true
        saveIfDue(into: &output)
        noteBusy(since: started)
        try await send(output, consumed: (consumed.count, now))
    }

    /// Names the partitions of a topic every task hears (chat.identities) before its follower has
    /// said anything: until it says where it stands, each counts as having records waiting, so no
    /// task folds a message past an identity that is in Kafka and not yet heard (the follower
    /// starts while the tasks read their first batches).
    func expectBroadcast(of topic: String, partitions: [Int32]) {
        for partition in partitions { heardLag[Self.source(topic, partition)] = true }
    }

    /// Hands a record every task hears (an identity) to every task, and queues what it made.
    /// `lagging` says which partitions of `topic` have records waiting in Kafka beyond those read.
    func broadcast(_ records: [KafkaRecord], of topic: String, lagging: [Int32: Bool]) async throws {
        var output = TaskOutput()
        let now = ContinuousClock.now
        var clock = InstanceClock()
        let lagging = Dictionary(uniqueKeysWithValues: lagging.map { (Self.source(topic, $0.key), $0.value) })
        // The follower reports every tick, also when nothing came: only what it brought is activity.
        let changed = !records.isEmpty || lagging.contains { heardLag[$0.key] != $0.value || $0.value }
        heardLag.merge(lagging) { $1 }
        for record in records { heardRecords[record.topicPartition, default: [:]][record.key ?? []] = record }
        // Every task reads the same records: one read late by any task is one record, not one per task.
        var readLate: [String: Int] = [:]
        for partition in tasks.keys.sorted() {
            var heard = work(partition, now: now, clock: &clock) { task in
                task.hear(
                    records, source: { Self.source($0.topic, $0.partition) }, lagging: lagging, logic: logic,
                    limits: limits, now: now)
            }
            readLate.merge(heard.readLate, uniquingKeysWith: max)
            heard.readLate = [:]
            output.append(heard)
        }
        output.readLate = readLate
        if changed { noteActivity(at: now) }
        noteBusy(since: now)
        try await send(output)
    }

    /// The merge's name for one partition of a topic every task reads.
    static func source(_ topic: String, _ partition: Int32) -> String { "\(topic)#\(partition)" }

    /// The instance's event clock at one moment (``instanceClock(now:)``), computed the first time a
    /// task's records need it: it looks at every task, and most passes over the tasks make no records.
    private struct InstanceClock {
        var value: Int64??
    }

    /// Runs `body` on a task, taken out of the table while it works (so its state is changed in
    /// place, not copied), and marks the records it made with the task's progress, as of the
    /// instance's event clock `clock` (computed at the first task that needs it, then kept).
    private func work(
        _ partition: Int32, now: ContinuousClock.Instant, clock: inout InstanceClock,
        _ body: (inout PartitionTask<Logic>) -> TaskOutput
    ) -> TaskOutput {
        guard var task = tasks.removeValue(forKey: partition) else { return TaskOutput() }
        var output = body(&task)
        // Back in the table before the instance's clock looks at every task; read there in place from
        // now on (``withTask(_:_:)``): read after it went back, `task` would be copied into the table.
        tasks[partition] = consume task
        if output.records.contains(where: { !$0.value.isEmpty }) {
            let current = clock.value ?? instanceClock(now: now)
            clock.value = current
            for (topic, partitions) in markTargets {
                let mark = withTask(partition) {
                    $0.progressMark(for: topic, logic: logic, instanceClock: current, now: now)
                }!
                // In the partitions the readers own the keys of, whatever the producer's partitioner:
                // marked per partition, and numbered.
                for index in output.records.indices
                where output.records[index].topic == topic && output.records[index].partition == nil {
                    output.records[index].partition = output.records[index].key.map {
                        KafkaPartitioner.murmur2.partition(of: $0, partitionCount: partitions)
                    }
                }
                _ = withTask(partition) {
                    $0.stampMarks(&output.records, topic: topic, partitions: partitions, mark: mark)
                }
                if let localMarks = merge.localMarks {
                    localMarks.number(&output.records, topic: topic, task: partition)
                    localMarks.publish(mark, topic: topic, task: partition, at: now)
                }
            }
        }
        return output
    }

    /// The event clock of the instance's busiest task in microseconds, as settled (see
    /// ``EventTimeMerge/settledClock(now:localWriters:)``; plus the lateness, which readers of an
    /// idle mark take off). The local writers' part of every task's clock comes from one look at the
    /// board per marked topic, for all the tasks.
    private func instanceClock(now: ContinuousClock.Instant) -> Int64? {
        var localWriters = [Int64?](repeating: nil, count: tasks.count)
        if let board = merge.localMarks {
            for topic in merge.markedTopics.keys {
                var readers: [(partition: Int32, seen: LocalProgressBoard.ReadSequences)] = []
                readers.reserveCapacity(tasks.count)
                forEachTask { _, task in
                    readers.append((task.merge.partition, task.merge.sequencesRead[topic] ?? [:]))
                }
                let clocks = board.latestCaughtUpClocks(
                    of: topic, readers: readers, clock: { merge.clockTime(of: $0, heardAt: $1, now: now) })
                for (index, clock) in clocks.enumerated() {
                    if let clock { localWriters[index] = max(localWriters[index] ?? .min, clock) }
                }
            }
        }
        var clock: Int64?
        var index = 0
        forEachTask { _, task in
            defer { index += 1 }
            task.merge.keepHeardClock(now: now)
            guard let settled = task.merge.settledClock(now: now, localWriters: localWriters[index]) else { return }
            clock = max(clock ?? .min, settled.saturating(plus: EventMicroseconds.microseconds(task.merge.lateness)))
        }
        return clock
    }

    /// `body` applied to the task of `partition` in place, nil if there is none: read out of the
    /// table, even to look at it, a task would be copied, a retain and a release per field.
    private func withTask<Result>(_ partition: Int32, _ body: (inout PartitionTask<Logic>) -> Result) -> Result? {
        guard let index = tasks.index(forKey: partition) else { return nil }
        return body(&tasks.values[index])
    }

    /// Applies `body` to every task (with its partition) where it is in ``tasks``, in the table's
    /// order: a task read out of the table, even as `tasks.values[index]`, would be copied, a retain
    /// and a release per field, and iterating `tasks.indices` would hold a copy of the table that
    /// the first change in place then duplicates.
    private func forEachTask(_ body: (Int32, inout PartitionTask<Logic>) -> Void) {
        var index = tasks.startIndex
        while index != tasks.endIndex {
            body(tasks.keys[index], &tasks.values[index])
            tasks.formIndex(after: &index)
        }
    }

    /// Tells the ``LocalProgressBoard`` every task's marks as they are now, between the sends of
    /// ``announceMarks()``: a task publishes its marks when it makes records, and otherwise its
    /// readers in this instance (which wait for each local writer) would learn only at the next send
    /// that they moved on, for instance that its input was read to its end. Nothing is told while the
    /// stage is idle (``isIdle(now:)``); returns whether it is.
    func publishLocalMarks() -> Bool {
        let now = ContinuousClock.now
        if isIdle(now: now) { return true }
        guard merge.localMarks != nil, !tasks.isEmpty else { return false }
        publishMarks(now: now)
        noteBusy(since: now)
        return false
    }

    /// Whether the stage is idle: no record waits in any task's merge, and nothing but the wall clock
    /// has moved the tasks' marks for longer than an input counts as recent plus the lateness
    /// (``EventTimeMerge/recentInput``). Every mark is then an idle one, which its readers in this
    /// instance move on with the wall clock themselves, or one that stays as it is until something
    /// happens: telling them again would tell them nothing new. (An idle pipeline computed every
    /// task's marks 200 times a second per stage.)
    private func isIdle(now: ContinuousClock.Instant) -> Bool {
        guard now - lastActivity > EventTimeMerge<Logic.Input>.recentInput + .milliseconds(merge.lateness) else {
            return false
        }
        var waiting = false
        forEachTask { _, task in waiting = waiting || task.merge.earliest != nil }
        return !waiting
    }

    /// Every task's marks now, per mark target in task order, into ``taskMarks``, told to the
    /// ``LocalProgressBoard`` (if any) once they are all computed, one look per target; with
    /// `instanceClock` (``instanceClock(now:)``) computed now unless given.
    private func publishMarks(now: ContinuousClock.Instant, instanceClock given: Int64?? = nil) {
        let clock = given ?? instanceClock(now: now)
        if taskMarks.count != markTargets.count { taskMarks = Array(repeating: [], count: markTargets.count) }
        for index in taskMarks.indices { taskMarks[index].removeAll(keepingCapacity: true) }
        forEachTask { partition, task in
            for index in markTargets.indices {
                let mark = task.progressMark(
                    for: markTargets[index].topic, logic: logic, instanceClock: clock, now: now)
                taskMarks[index].append((partition, mark))
            }
        }
        for index in taskMarks.indices where !taskMarks[index].isEmpty {
            taskMarks[index].sort { $0.task < $1.task }
            merge.localMarks?.publish(taskMarks[index], topic: markTargets[index].topic, at: now)
        }
    }

    /// Sends the progress marks of the tasks whose marks changed since they were last sent to every
    /// partition of each mark target: their readers fold in event-time order with them. The marks of
    /// all this instance's tasks go in one value-less record per partition (a header each), so an
    /// interval costs (instances × partitions) records per target, not (tasks × partitions).
    ///
    /// A partition whose reader is in this instance and has read a task's every record there hears
    /// that task's mark from the ``LocalProgressBoard``, not from Kafka; a task just taken first
    /// writes its fences (``LocalProgressBoard/fence(topic:task:partitions:)``), which carry its mark.
    func announceMarks() async throws {
        let now = ContinuousClock.now
        publishMarks(now: now)
        let board = merge.localMarks
        var output = TaskOutput()
        for (index, (topic, partitions)) in markTargets.enumerated() {
            // Each mark's header is written when first needed: most marks are heard from the board.
            var marks: [(task: Int32, header: KafkaHeader?, mark: ProgressMark)] = []
            marks.reserveCapacity(taskMarks[index].count)
            var fenced = LocalProgressBoard.TaskSet()
            for (partition, mark) in taskMarks[index] {
                if let fences = board?.fence(topic: topic, task: partition, partitions: partitions) {
                    let header = KafkaHeader(name: ProgressMark.header, value: mark.headerValue(task: partition))
                    output.records += fences.map { fence in
                        var fence = fence
                        fence.headers.append(header)
                        return fence
                    }
                    fenced.insert(partition)
                }
                marks.append((partition, nil, mark))
            }
            let current = board?.currentWriters(topic: topic) ?? [:]
            // Taken out of the tables for the loop, which runs tasks × partitions times per interval:
            // looked up there, the topic's name was hashed for every pair.
            var announcedHere = announced.removeValue(forKey: topic) ?? [:]
            defer { if !announcedHere.isEmpty { announced[topic] = announcedHere } }
            for target in 0..<partitions {
                let currentHere = current[target] ?? []
                var said = announcedHere.removeValue(forKey: target) ?? [:]
                var headers: [KafkaHeader] = []
                for markIndex in marks.indices {
                    let (task, mark) = (marks[markIndex].task, marks[markIndex].mark)
                    if currentHere.contains(task) {
                        said[task] = nil  // Heard here; said again through Kafka once this reader is not current.
                        continue
                    }
                    guard said[task].map({ mark.differs(from: $0) }) ?? true else { continue }
                    said[task] = mark
                    guard !fenced.contains(task) else { continue }  // A fence carries it.
                    let header =
                        marks[markIndex].header
                        ?? KafkaHeader(name: ProgressMark.header, value: mark.headerValue(task: task))
                    marks[markIndex].header = header
                    headers.append(header)
                }
                if !said.isEmpty { announcedHere[target] = said }
                guard !headers.isEmpty else { continue }
                if let board { headers.append(board.markRecordHeader) }
                output.records.append(
                    OutgoingRecord(topic: topic, key: nil, value: [], headers: headers, partition: target))
            }
        }
        noteBusy(since: now)
        guard !output.records.isEmpty else { return }
        try await send(output)
    }

    /// Folds the records that wait in the tasks' merges and may go now (see
    /// ``PartitionTask/releaseDue(logic:now:)``), and queues what they made. Returns when to look
    /// again: the earliest instant a merge's wall clock lets a record go (``EventTimeMerge/nextRelease``),
    /// or `checkInterval` from now if a merge with records waiting could not foresee one; nil when no
    /// record waits. Meanwhile a batch that leaves records waiting which may go sooner rings
    /// ``releaseAlarm``; with every task looked at each `checkInterval` instead, most passes at 10,000
    /// messages/s found no task due (stage 1 842 passes a second, 479 of them idle; stage 2 363, 312).
    ///
    /// When a task due now lets records go, the tasks whose merges expect to within
    /// ``EventTimeMerge/wallClockStep`` are looked at too: the tasks of an instance share its clock
    /// and their floors pass a time together, sooner than a merge foresees when the marks of the
    /// others move on. Looked at only as each merge foresaw, stage 1 let one time's records go in
    /// pieces up to 4 ms apart (p99, at 10,000 messages/s), and stage 2 waited for the last piece.
    func releaseDue(checkInterval: Duration) async throws -> ContinuousClock.Instant? {
        let now = ContinuousClock.now
        let soon = now + .microseconds(EventTimeMerge<Logic.Input>.wallClockStep)
        // Sets of bits, not lists: this runs at every wake of the release loop.
        var due = LocalProgressBoard.TaskSet()
        var dueSoon = LocalProgressBoard.TaskSet()
        forEachTask { partition, task in
            guard task.merge.earliest != nil else { return }
            // A merge whose floors the wall clock alone holds until later is left until then: the
            // records and marks its task reads meanwhile are looked at as they come.
            guard let release = task.merge.nextRelease, release > now else { return due.insert(partition) }
            if release <= soon { dueSoon.insert(partition) }
        }
        if !due.isEmpty {
            lastActivity = now
            var clock = InstanceClock()
            var output = TaskOutput()
            if release(due, now: now, clock: &clock, into: &output) {
                release(dueSoon, now: now, clock: &clock, into: &output)
            }
            noteBusy(since: now)
            try await send(output)
        }
        // The earliest instant a merge foresaw; a merge that could not foresee one is looked at again
        // after `checkInterval`.
        var next: ContinuousClock.Instant?
        let check = ContinuousClock.now + checkInterval
        forEachTask { _, task in
            guard task.merge.earliest != nil else { return }
            let release = task.merge.nextRelease ?? check
            next = next.map { min($0, release) } ?? release
        }
        plannedRelease = next
        return next
    }

    /// Folds what the merges of the tasks of `partitions` let go now into `output`, task by task from
    /// the lowest; returns whether any let records go.
    @discardableResult
    private func release(
        _ partitions: LocalProgressBoard.TaskSet, now: ContinuousClock.Instant, clock: inout InstanceClock,
        into output: inout TaskOutput
    ) -> Bool {
        var released = false
        for partition in partitions {
            output.append(
                work(partition, now: now, clock: &clock) { task in
                    let waiting = task.merge.count
                    defer { released = released || task.merge.count < waiting }
                    return task.releaseDue(logic: logic, now: now)
                })
        }
        return released
    }

    /// Lets wall-clock time advance event time in every task, so waits end while input is quiet.
    /// When no batch came since the last tick, every task saves: a quiet stage has its offsets
    /// stored without waiting for its turns.
    func tick() async throws {
        let started = ContinuousClock.now
        let lag = try? consumer?.lag()
        if let lag, !lag.isEmpty { observer.onLag(lag) }
        let now = ContinuousClock.now
        var clock = InstanceClock()
        var output = TaskOutput()
        for partition in tasks.keys.sorted() {
            output.append(
                work(partition, now: now, clock: &clock) { $0.advanceClock(logic: logic, lag: lag, now: now) })
        }
        if !output.isEmpty || lag?.values.contains(where: { $0 > 0 }) == true { noteActivity(at: now) }
        if processedSinceTick {
            saveIfDue(into: &output)
        } else {
            for partition in tasks.keys.sorted() { output.append(tasks[partition]!.save(logic: logic)) }
        }
        processedSinceTick = false
        noteBusy(since: started)
        try await send(output)  // Also when only dead letters or counts came of it.
    }

    /// Creates (or takes back) the tasks of newly assigned partitions, with
    /// their state restored from the changelog, before any of their records is processed.
    func assign(_ partitions: [Int32]) async throws {
        var tableOutput = TaskOutput()
        let tables = try await readTables(for: partitions.filter { tasks[$0] == nil })
        for partition in partitions where tasks[partition] == nil {
            let kept = standby.removeValue(forKey: partition)
            var task =
                kept?.task
                ?? PartitionTask(
                    partition: partition, partitionCount: partitionCount, state: logic.initialState(), merge: merge)
            if kept != nil { task.resume(with: merge) }
            task.tracing = tracing
            // The consumer forgets stored offsets with its assignment: the next save stores them anew.
            task.savedOffsets = [:]
            let started = ContinuousClock.now
            let restored = try await restorer.read(
                topic: logic.changelogTopic, partition: partition, from: kept?.changelogPosition ?? 0)
            for record in restored.records {
                let key = record.key.map { String(decoding: $0, as: UTF8.self) } ?? ""
                let entry =
                    record.value.isEmpty
                    ? ChangelogValue(entry: nil, applied: [:]) : try ChangelogValue.decode(record.value)
                try task.restore(key: key, value: entry, logic: logic)
            }
            var tableRecords = 0
            for table in logic.tableTopics {
                let owned = tables[table]?.records(of: partition) ?? []
                tableRecords += owned.count
                tableOutput.append(task.restoreTable(table, owned, logic: logic, limits: limits))
            }
            task.awaitPositions(logic: logic, heard: heardLag, now: .now)
            changelogPositions[partition] = restored.position
            tasks[partition] = task
            let heard = heardRecords.values.flatMap(\.values).sorted {
                ($0.partition, $0.offset) < ($1.partition, $1.offset)
            }
            if !heard.isEmpty {
                let now = ContinuousClock.now
                var clock = InstanceClock()
                tableOutput.append(
                    work(partition, now: now, clock: &clock) { task in
                        task.hear(
                            heard, source: { Self.source($0.topic, $0.partition) }, lagging: heardLag, logic: logic,
                            limits: limits, now: now)
                    })
            }
            logger.info(
                "Restored \(logic.name.rawValue) task \(partition)",
                metadata: [
                    "changelog-records": "\(restored.records.count)", "table-records": "\(tableRecords)",
                    "from": "\(kept?.changelogPosition ?? 0)",
                    "milliseconds": "\((ContinuousClock.now - started).milliseconds)",
                ])
        }
        noteActivity(at: .now)
        try await send(tableOutput)
    }

    /// The stage's tables as they stand now, each partition read once for all of `partitions` (the
    /// tasks being created): nothing when there are none.
    private func readTables(for partitions: [Int32]) async throws -> [String: TableContents] {
        guard !partitions.isEmpty, !logic.tableTopics.isEmpty else { return [:] }
        let started = ContinuousClock.now
        var tables: [String: TableContents] = [:]
        var count = 0
        for table in logic.tableTopics {
            var contents = TableContents(for: partitions, partitionCount: partitionCount)
            // Empty partitions cost one look-up each.
            for source in 0..<partitionCount {
                let records = try await restorer.read(topic: table, partition: source, from: 0).records
                count += records.count
                contents.add(records, of: source)
            }
            tables[table] = contents
        }
        logger.info(
            "Read the \(logic.name.rawValue) tables for \(partitions.count) tasks",
            metadata: [
                "tables": "\(logic.tableTopics)", "records": "\(count)",
                "milliseconds": "\((ContinuousClock.now - started).milliseconds)",
            ])
        return tables
    }

    /// Finishes the work of partitions being given up (everything sent,
    /// offsets stored) and puts their tasks aside.
    func revoke(_ partitions: [Int32]) async {
        // Put aside first: a batch that reaches this runner while the work is being finished
        // drops their records (their next owner reads them from the commit) instead of adding
        // work whose offsets could only be stored after the partitions are gone.
        merge.localMarks?.remove(tasks: partitions)
        merge.localMarks?.forgetReaders(of: merge.markedTopics.keys, partitions: partitions)
        noteActivity(at: .now)
        var saved = TaskOutput()
        for partition in partitions {
            guard var task = tasks.removeValue(forKey: partition) else { continue }
            saved.append(task.save(logic: logic))
            standby[partition] = (task, changelogPositions[partition] ?? 0)
        }
        do {
            try await send(saved)
            try await drain()
        } catch { logger.error("Could not finish work before giving partitions up: \(error)") }
    }

    /// Counts records of users' producers that were not in their key's partition, and warns once per
    /// topic: about misplaced records (naming the partitioner that would have put them there), and
    /// about keys that arrived in several partitions (a random partitioner: no order per key).
    private func reportPartitioning(_ output: TaskOutput) {
        for (topic, misplaced) in output.misplaced.sorted(by: { $0.key < $1.key }) {
            observer.onMisplaced(topic, misplaced.count)
            guard warned.insert("misplaced \(topic)").inserted else { continue }
            let likely = misplaced.likelyPartitioners.map(\.description).joined(separator: " or ")
            logger.warning(
                """
                Records of \(topic) arrive in other partitions than murmur2 of their key gives (\(misplaced.count) in this batch; \
                likely partitioner: \(likely.isEmpty ? "none of murmur2, CRC32, FNV-1a" : likely)). They are forwarded to \
                \(logic.repartitionTopic), which costs a hop: set partitioner=murmur2_random on the producers \
                (docs/operations.md, "Producers and partitioners").
                """)
        }
        for topic in output.spreadKeys.sorted() where warned.insert("spread \(topic)").inserted {
            logger.warning(
                """
                A key of \(topic) arrived in more than one partition: its producer partitions at random, so the order \
                of that key's records cannot be promised. Key every record and use a deterministic partitioner \
                (docs/operations.md, "Producers and partitioners").
                """)
        }
    }

    /// Adds to `output` the saves that are due. The tasks take turns, one every
    /// ``saveInterval`` / their count, so each saves once per interval and no fold waits
    /// for all of them at once.
    private func saveIfDue(into output: inout TaskOutput) {
        guard !tasks.isEmpty else { return }
        let now = ContinuousClock.now
        let partitions = tasks.keys.sorted()
        nextSave = max(nextSave, now - saveInterval)  // After a quiet spell, one round at most.
        while nextSave <= now {
            let partition = partitions.first { $0 > lastSaved } ?? partitions[0]
            output.append(tasks[partition]!.save(logic: logic))
            lastSaved = partition
            nextSave += saveInterval / partitions.count
        }
    }

    /// Waits until everything queued, also while waiting, is acknowledged and its offsets stored.
    func drain() async throws {
        while case .wait(let pending) = saveChain.drain() {
            for work in pending { try await work.value }
        }
    }

    /// - Parameter consumed: the records read whose work `output` is, and when their batch arrived.
    private func send(_ output: TaskOutput, consumed: (records: Int, at: ContinuousClock.Instant)? = nil) async throws {
        if output.identityWaits > 0 || output.identityTimeouts > 0 {
            observer.onIdentityWaits(output.identityWaits, output.identityTimeouts)
        }
        if output.releasedByMaximumWait > 0 {
            observer.onReleasedByMaximumWait(logic.name, output.releasedByMaximumWait)
        }
        if output.foldedLate > 0 { observer.onFoldedLate(logic.name, output.foldedLate) }
        for (topic, count) in output.readLate { observer.onReadLate(topic, count) }
        if !output.eventTimeWaits.isEmpty { observer.onEventTimeWaits(logic.name, output.eventTimeWaits) }
        reportPartitioning(output)
        guard !output.isEmpty || !output.deadLetters.isEmpty else { return }
        observer.decided(output.decisions)
        deadLetters.warn(output.deadLetters)
        let producer = producer
        let consumer = consumer
        let observer = observer
        let logger = logger
        let records = output.records
        let deadLetters = deadLetters
        let stage = logic.name
        // Ordered steps, each chained to the same step of the send before (see ``SaveChain``).
        saveChain.queueOutputs(
            enqueue: { await producer.enqueue(records) },
            acknowledge: { outputs in
                _ = try await outputs.reports()
                // Written (or given up, counted and logged) before the offsets of this work are stored;
                // a dead letter that fails never holds the partition back.
                let written = await deadLetters.write(output.deadLetters)
                // Most sends write no dead letter: their records are not copied into a new array.
                let produced = written.records.isEmpty ? records : records + written.records
                observer.produced(produced, commands: output.commands, deadLetters: written.letters)
                if let consumed { observer.onProcessed(stage, consumed.records, .now - consumed.at) }
            })
        if !output.changelog.isEmpty || !output.offsets.isEmpty {
            // Encoded off this actor and the cooperative pool, while the outputs are in flight.
            let encoded = Task.detached { await ChangelogEncoder.shared.records(of: output) }
            let window = saveChain.queueSave(
                encoded: encoded, enqueue: { await producer.enqueue($0) }, acknowledge: { _ = try await $0.reports() },
                store: {
                    guard let consumer, !output.offsets.isEmpty else { return }
                    do { try consumer.store(output.offsets) } catch {
                        // A partition given up meanwhile: its new owner re-reads from the last commit.
                        logger.debug("Offsets not stored: \(error)")
                    }
                })
            if case .wait(let oldestSave) = window { try await oldestSave.value }
        }
        if case .wait(let oldestBatch) = saveChain.batchWindow() { try await oldestBatch.value }
    }
}
