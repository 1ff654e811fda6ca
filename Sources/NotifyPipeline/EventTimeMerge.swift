import NotifyCore
import NotifyKafka

extension KafkaRecord {
    /// Whether this is a stage's progress mark record: no value, a ``ProgressMark`` header; its
    /// topic's readers other than the stages skip it.
    public var isProgressMark: Bool {
        value.isEmpty && headers.contains { $0.name == ProgressMark.header }
    }
}

/// How far one stage-1 task has come, as it tells stage 2 in the `notify-mark` header of its
/// `notify.fanout` records (and in value-less mark records to the partitions it has nothing for):
/// no record it writes after this one has an earlier event time than the mark says.
enum ProgressMark: Sendable, Hashable {
    /// No later record before this event time (milliseconds): the task has input waiting in Kafka,
    /// a held message or records waiting in its merge.
    case at(Int64)
    /// The task has read all its input: no later record before this time (microseconds) plus the
    /// wall-clock time since the mark was read (less the merge's lateness allowance). Microseconds,
    /// not milliseconds: a reader in the same instance adds the time since to it, and whole
    /// milliseconds taken off on both sides would hold its records up to two milliseconds longer;
    /// the header says it in whole milliseconds, rounded down.
    case idle(since: Int64)
    /// The task has read all its input and never had any. A reader in the same instance hears at
    /// once from the ``LocalProgressBoard`` when that changes; a reader in another instance hears it
    /// only at the writer's next send, and holds its records for that (see ``EventTimeMerge``).
    case finished

    static let header = "notify-mark"

    /// Whether the readers must be told this mark when they were told `previous`: an idle mark when
    /// its time moved on by more than ``announceTolerance`` (readers in other instances do not move
    /// it on by themselves: they cannot tell a quiet writer from a dead one, so a quiet writer says
    /// again, at every interval, how far it has come); any other mark when it changed.
    func differs(from previous: ProgressMark) -> Bool {
        switch (self, previous) {
        case (.idle(let since), .idle(let before)): since.saturating(minus: before) > Self.announceTolerance * 1_000
        case (.finished, .finished): false
        default: self != previous
        }
    }

    /// How far (milliseconds) an idle mark may move on before its readers are told again.
    static let announceTolerance: Int64 = 5

    /// `<task>:<milliseconds>`, `<task>:<milliseconds>+` or `<task>:max`.
    func headerValue(task: Int32) -> [UInt8] {
        var value: [UInt8] = []
        value.reserveCapacity(32)
        DecimalASCII.append(Int64(task), to: &value)
        value.append(UInt8(ascii: ":"))
        switch self {
        case .at(let time): DecimalASCII.append(time, to: &value)
        case .idle(let since):
            DecimalASCII.append(EventMicroseconds.milliseconds(roundingDown: since), to: &value)
            value.append(UInt8(ascii: "+"))
        case .finished: value += "max".utf8
        }
        return value
    }

    /// The task and mark of a header value, if it is one.
    static func parse(_ value: [UInt8]) -> (task: Int32, mark: ProgressMark)? {
        guard let colon = value.firstIndex(of: UInt8(ascii: ":")),
            let task = DecimalASCII.parse(value[..<colon]).flatMap({ Int32(exactly: $0) })
        else { return nil }
        var rest = value[(colon + 1)...]
        if rest.elementsEqual("max".utf8) { return (task, .finished) }
        let idle = rest.last == UInt8(ascii: "+")
        if idle { rest = rest.dropLast() }
        guard let time = DecimalASCII.parse(rest) else { return nil }
        return (task, idle ? .idle(since: EventMicroseconds.microseconds(time)) : .at(time))
    }
}

/// The event-time merge of one task's inputs: records are buffered as they are read and folded in
/// ``EventOrder`` once no input can still bring an earlier one.
///
/// Each input (a topic partition read by the task, or, for `notify.fanout`, each stage-1 task
/// writing to it) has a *floor*, the earliest event time it can still bring:
/// - an input with records waiting in Kafka: the latest event time read from it (each partition is
///   assumed to be written roughly in event-time order; a record older than its partition's latest
///   is *late*, and is folded when it comes);
/// - an input read to its end: that latest time plus the wall-clock time since it was read, less
///   ``lateness`` (an input never read from: no floor);
/// - `notify.fanout`: the lowest progress mark of the stage-1 tasks (``ProgressMark``). A task in
///   another instance that has read nothing (`.finished`) may read a record at any moment and say so
///   only at its next send of marks: its floor is that of an input read to its end, less one more
///   ``lateness`` and one ``markInterval`` (no floor while the reader has no event clock).
///
/// A buffered record is folded once its time is below every floor, or once it has waited
/// ``maximumWait`` (a stuck or absent writer must not hold everything): those are counted.
///
/// The clocks and floors are kept in microseconds (``EventMicroseconds``): event times are whole
/// milliseconds, but the wall-clock time added to them is not, and rounding it down to whole
/// milliseconds would hold every record up to a millisecond past the moment its time is passed.
struct EventTimeMerge<Input: Sendable>: Sendable {
    struct Source: Sendable {
        /// The latest event time read from the input.
        var latest: Int64?
        /// When it was read.
        var readAt: ContinuousClock.Instant
        /// Records of the input wait in Kafka beyond those read.
        var lagging = false

        /// Notes a record of event time `time` read at `now`.
        mutating func read(_ time: Int64, at now: ContinuousClock.Instant) {
            if latest.map({ time >= $0 }) ?? true { latest = time }
            readAt = now
        }
    }

    /// Where a waiting record stands in the fold order: its ``EventOrder``, then its arrival.
    struct Place: Sendable, Comparable {
        var order: EventOrder
        var sequence: Int

        static func < (lhs: Place, rhs: Place) -> Bool {
            let order = lhs.order.compared(to: rhs.order)
            return order != 0 ? order < 0 : lhs.sequence < rhs.sequence
        }
    }

    /// When a record came, and where it stands.
    struct Arrival: Sendable {
        var place: Place
        var arrived: ContinuousClock.Instant
    }

    /// The places of the records waiting, the earliest first: a record that comes out of order
    /// (several writers, a backlog read partition by partition) costs a logarithm, one that comes in
    /// order an append, and no release moves the records that stay.
    private var places = MostlySortedQueue<Place>()
    /// The records in arrival order, from sequence `firstSequence`: `inputs[sequence - firstSequence]`,
    /// nil once folded, and its ``Arrival`` at the same index. Arrival order is also the order in which
    /// records become overdue. The folded ones before `front` are dropped once they are the larger part.
    private var inputs: [DecodedInput<Input>?] = []
    private var arrivals: [Arrival] = []
    private var front = 0
    private var firstSequence = 1
    private var sequence = 0
    /// Input name (topic, or topic and partition for an input every task reads) → where it stands.
    private(set) var sources: [String: Source] = [:]
    /// ``heardClock(now:)`` in its parts, as worked out since ``sources`` and ``marks`` last
    /// changed (``keepHeardClock(now:)``); nil when it was not.
    private var heard: HeardClock?
    /// Marked topic → writing task → its latest mark, and when it was read.
    private(set) var marks: [String: [Int32: (mark: ProgressMark, readAt: ContinuousClock.Instant, local: Bool)]] = [:]
    /// The inputs whose floor is the marks of the tasks that write them (notify.fanout: the stage-1
    /// tasks; a repartition topic: the tasks of the stage itself), with how many tasks write each.
    let markedTopics: [String: Int32]
    /// ``markedTopics`` in one fixed order: the board's readings come in it.
    private let markedTopicList: [(topic: String, writers: Int32)]
    /// How much later than the wall clock says a record may reach Kafka and still be folded in order.
    let lateness: Int64
    /// The longest a record waits for the floors; then it is folded anyway.
    let maximumWait: Duration
    /// How often the writers of the marked topics send their changed marks through Kafka
    /// (``PipelineSettings/markInterval``).
    let markInterval: Duration
    /// The event clock (microseconds) as each release saw it, over the last ``lateness`` of
    /// wall-clock time (and the one sample before), oldest first (see ``settledClock(now:localWriters:)``).
    private var clockSamples: [(wall: ContinuousClock.Instant, clock: Int64)] = []
    /// When the merge took its first record. For ``lateness`` from then, where the event clock stood
    /// the lateness ago is unknown, and an input read to its end holds every record (see ``floor(now:)``).
    private var firstRead: ContinuousClock.Instant?
    /// ``lateness`` in microseconds.
    private var latenessMicroseconds: Int64 { lateness * 1_000 }
    /// The marks of the writers in this instance, read without the round trip through Kafka.
    let localMarks: LocalProgressBoard?
    /// The partition of the marked topics this merge reads.
    var partition: Int32 = 0
    /// Marked topic → local writer task → the highest sequence number read from it (see ``LocalProgressBoard``).
    private(set) var sequencesRead: [String: LocalProgressBoard.ReadSequences] = [:]
    /// Whether ``sequencesRead`` changed since the board was last told (``publishReads()``).
    private var readsToPublish = false
    /// The board's readings of the local writers as the last release took them, one per marked
    /// topic in the order of ``markedTopicList``: each release takes them again into the same storage
    /// (``readLocalWriters()``).
    private var localReadings: [LocalProgressBoard.Reading] = []

    /// When the wall clock alone lets the earliest record waiting go, or ends a record's maximum
    /// wait, whichever comes first, as the last ``release(now:predicting:forced:)`` found the floors
    /// and the local writers, if it was asked to predict: nil when it was not, when nothing waits, or
    /// when a floor that only new records or marks move (an input with records waiting in Kafka, a
    /// writer's time mark) holds that record back. Until then, only records or marks read can let
    /// one go sooner (see ``StageRunner/releaseDue(checkInterval:)``).
    private(set) var nextRelease: ContinuousClock.Instant?
    /// The latest place in ``EventOrder`` of the records folded so far.
    private var latestFolded: EventOrder?
    /// How many records were folded after one that comes later in ``EventOrder``, since the merge
    /// began: they were read more than ``lateness`` after the event clock passed their time (or after
    /// a record its maximum wait let go), so they were folded out of the order `notify render` folds
    /// them in.
    private(set) var foldedLate = 0
    /// The highest floor (microseconds) a release has let records go by: the merge took it that no
    /// input could still bring anything earlier (see ``add(_:source:now:)``). Where no input held a
    /// floor (every writer `.finished` in this instance, or, elsewhere, while this merge has no event
    /// clock), the time of the latest record let go.
    private var passedFloor = Int64.min

    init(
        markedTopics: [String: Int32] = [:], lateness: Int64, maximumWait: Duration,
        markInterval: Duration = PipelineSettings.defaultMarkInterval, localMarks: LocalProgressBoard? = nil
    ) {
        self.markedTopics = markedTopics
        self.markedTopicList = markedTopics.sorted { $0.key < $1.key }.map { ($0.key, $0.value) }
        self.lateness = lateness
        self.maximumWait = maximumWait
        self.markInterval = markInterval
        self.localMarks = localMarks
    }

    /// The earliest event time buffered.
    var earliest: Int64? { places.min?.order.milliseconds }

    /// How many records wait.
    var count: Int { places.count }

    /// Takes a record read from `source`, and says whether it was *read late*: its time is below a
    /// floor a release has already passed, so records after it may have been folded before it (or,
    /// through the stage's marks, in the next stage). A record folded out of order here
    /// (``foldedLate``) was read late, unless the maximum wait let the later one go; one read late
    /// folds in order if nothing later was folded yet. Counted by input, it names the input that
    /// came late: a users' producer, or, for the fanout and repartition topics, the stage writing
    /// them, behind the event time of the reader's other inputs.
    @discardableResult
    mutating func add(_ input: DecodedInput<Input>, source: String, now: ContinuousClock.Instant) -> Bool {
        let order = input.order
        let time = order.milliseconds
        if firstRead == nil { firstRead = now }
        if markedTopics[source] == nil {
            sources[source, default: Source(latest: nil, readAt: now)].read(time, at: now)
            heard = nil
        }
        sequence += 1
        let place = Place(order: order, sequence: sequence)
        inputs.append(input)
        arrivals.append(Arrival(place: place, arrived: now))
        places.insert(place)
        return EventMicroseconds.microseconds(time) < passedFloor
    }

    /// Notes whether records of `source` wait in Kafka beyond those read.
    mutating func noteLag(_ source: String, lagging: Bool, now: ContinuousClock.Instant) {
        guard markedTopics[source] == nil else { return }
        if var clock = sources[source] {
            if clock.lagging && !lagging {
                clock.readAt = now  // Read to its end now.
                heard = nil
            }
            clock.lagging = lagging
            sources[source] = clock
        } else if lagging {
            sources[source] = Source(latest: nil, readAt: now, lagging: true)
        }
    }

    /// Notes the mark of a task writing `topic`; `local`: read from a record this instance wrote.
    mutating func noteMark(
        topic: String, task: Int32, _ mark: ProgressMark, local: Bool = false, now: ContinuousClock.Instant
    ) {
        guard markedTopics[topic] != nil else { return }
        marks[topic, default: [:]][task] = (mark, now, local)
        heard = nil
    }

    /// Notes a record of `topic` written by `task` of this instance, with its sequence number.
    mutating func noteSequence(topic: String, task: Int32, _ sequence: Int64) {
        guard markedTopics[topic] != nil, sequence > sequencesRead[topic]?[task] ?? 0 else { return }
        sequencesRead[topic, default: LocalProgressBoard.ReadSequences()][task] = sequence
        readsToPublish = true
    }

    /// Tells the ``LocalProgressBoard`` which local writers' records this merge has read, if that
    /// changed since it was last told: their marks need not come through Kafka.
    mutating func publishReads() {
        guard readsToPublish, let localMarks else { return }
        readsToPublish = false
        for (topic, seen) in sequencesRead { localMarks.noteRead(topic: topic, partition: partition, seen: seen) }
    }

    /// The task's event clock in whole milliseconds (rounded down): the latest event time any input
    /// has brought, plus the wall-clock time since it was read (the freshest of its inputs, and of
    /// the stage-1 tasks' marks).
    func eventClock(now: ContinuousClock.Instant) -> Int64? {
        eventClock(now: now, local: localWriters()).map(EventMicroseconds.milliseconds(roundingDown:))
    }

    /// The local writers of each marked topic, in the order of ``markedTopicList``, as this merge's
    /// reader sees them now (one look at the board per topic, for the clock and the floors alike);
    /// none without a board.
    private func localWriters() -> [LocalProgressBoard.Reading] {
        guard let localMarks else { return [] }
        return markedTopicList.map { topic, _ in
            localMarks.writers(of: topic, partition: partition, seen: sequencesRead[topic] ?? [:])
        }
    }

    /// Takes ``localReadings`` again, as ``localWriters()`` would give them, in the storage they have.
    private mutating func readLocalWriters() {
        guard let localMarks else { return }
        if localReadings.count != markedTopicList.count {
            localReadings = Array(repeating: LocalProgressBoard.Reading(), count: markedTopicList.count)
        }
        for index in markedTopicList.indices {
            let topic = markedTopicList[index].topic
            localMarks.read(&localReadings[index], of: topic, partition: partition, seen: sequencesRead[topic] ?? [:])
        }
    }

    /// ``eventClock(now:)`` in microseconds, with the local writers as `local` says.
    private func eventClock(now: ContinuousClock.Instant, local: [LocalProgressBoard.Reading]) -> Int64? {
        var clock = heardClock(now: now)
        // The local writers' marks too, of those whose every record here is read: their readers here
        // may hear them only from the board.
        for reading in local {
            for (_, mark, madeAt, unread) in reading.current where unread == .max {
                guard let time = clockTime(of: mark, heardAt: madeAt, now: now) else { continue }
                clock = max(clock ?? .min, time)
            }
        }
        return clock
    }

    /// The event clock (microseconds) of the inputs read and the marks heard, without the local writers' marks.
    private func heardClock(now: ContinuousClock.Instant) -> Int64? {
        (heard ?? workOutHeardClock(now: now)).clock(now: now)
    }

    /// The event clock of the inputs read and the marks heard, in two parts: the latest of the times
    /// that stand (`.at` marks), and, of the times that move on with the wall clock (an input's
    /// latest time, an idle mark), the one that is latest, with the instant it moves on from.
    struct HeardClock: Sendable {
        var standing: Int64?
        var moving: (time: Int64, from: ContinuousClock.Instant)?

        /// The clock at `now` (microseconds).
        func clock(now: ContinuousClock.Instant) -> Int64? {
            guard let moving else { return standing }
            return max(standing ?? .min, moving.time.saturating(plus: (now - moving.from).microseconds))
        }
    }

    /// ``HeardClock`` from every input read and mark heard, the moving times ranked as of `now`.
    private func workOutHeardClock(now: ContinuousClock.Instant) -> HeardClock {
        var heard = HeardClock()
        var latestMoving = Int64.min
        func move(_ time: Int64, from instant: ContinuousClock.Instant) {
            let moved = time.saturating(plus: (now - instant).microseconds)
            guard heard.moving == nil || moved > latestMoving else { return }
            (heard.moving, latestMoving) = ((time, instant), moved)
        }
        for source in sources.values {
            guard let latest = source.latest else { continue }
            move(EventMicroseconds.microseconds(latest), from: source.readAt)
        }
        for writers in marks.values {
            for (mark, readAt, _) in writers.values {
                if case .idle(let since) = mark {
                    move(since, from: readAt)
                } else if let time = clockTime(of: mark, heardAt: readAt, now: now) {
                    heard.standing = max(heard.standing ?? .min, time)
                }
            }
        }
        return heard
    }

    /// Works out the event clock of the inputs read and the marks heard once, for every look until
    /// they change: each pass that makes records asks every task's clock (the instance clock), and
    /// worked out from every input and mark at each look, that cost the tasks times the writers per
    /// pass. Ranked as of `now`, a moving time kept may come out up to a microsecond short of another
    /// at a later instant (whole microseconds, each rounded down).
    mutating func keepHeardClock(now: ContinuousClock.Instant) {
        if heard == nil { heard = workOutHeardClock(now: now) }
    }

    /// What a writer's mark, heard at `heardAt`, says of the event clock now (microseconds). A writer whose inputs
    /// are read to their end sets its `.at` mark the lateness behind its own clock
    /// (``mark(of:held:includingBuffered:instanceClock:now:)``), so the lateness is added back: a
    /// reader whose clock comes from its writers' marks would otherwise take it off twice, and hold
    /// its own read-to-end inputs (stage 2's tables) that much longer. (A writer whose inputs lag
    /// marks their latest time: the reader's clock is then at most the lateness ahead of it.)
    ///
    /// `.at(.min)`, the mark of a writer whose inputs lag before their first record, says nothing of
    /// the clock: nil, as for `.finished`. Taken as a time, it set the instance clock of a stage 1
    /// that had never read a record near `Int64.min`, moving on with the wall clock; its tasks'
    /// idle marks said that time to stage 2 at every mark interval, and stage 2 held each of its
    /// records for `pipeline.maxEventTimeWait`.
    func clockTime(of mark: ProgressMark, heardAt: ContinuousClock.Instant, now: ContinuousClock.Instant)
        -> Int64?
    {
        switch mark {
        case .at(let time): time == .min ? nil : EventMicroseconds.microseconds(time.saturating(plus: lateness))
        case .idle(let since): since.saturating(plus: (now - heardAt).microseconds)
        case .finished: nil
        }
    }

    /// Keeps the event clock as it is now (see ``settledClock(now:localWriters:)``).
    private mutating func noteClock(_ clock: Int64?, now: ContinuousClock.Instant) {
        guard let clock else { return }
        clockSamples.append((now, clock))
        let horizon = now - .milliseconds(lateness)
        if let settled = clockSamples.lastIndex(where: { $0.wall <= horizon }), settled > 0 {
            clockSamples.removeFirst(settled)
        }
        // Thinned past 1,024 samples, keeping the oldest: the one from before the horizon.
        if clockSamples.count > 1_024 { clockSamples.removeSubrange(1...(clockSamples.count - 1_024)) }
    }

    /// The floor of an input read to its end, in microseconds: the event clock as it was ``lateness``
    /// of wall-clock time ago, moved on by the wall clock since (never above the present clock less ``lateness``).
    /// While event time runs at the wall clock's pace that is the clock less the lateness; in a
    /// burst or a backlog, when event time runs far ahead, it is where the clock stood when the
    /// records now reaching Kafka were produced: a partition whose newest records the consumer
    /// has not seen yet (its high watermark is news of the last fetch) is not taken as read past
    /// times the burst reached since.
    ///
    /// `localWriters` is the local writers' part of the event clock (microseconds): the latest clock
    /// among the writers on the board whose records here this merge has all read, as
    /// ``LocalProgressBoard/latestCaughtUpClocks(of:readers:clock:)`` gives it for every task of the
    /// instance at once (nil: none, or no board).
    func settledClock(now: ContinuousClock.Instant, localWriters: Int64?) -> Int64? {
        let heard = heardClock(now: now)
        guard let localWriters else { return settledClock(heard, now: now) }
        return settledClock(max(heard ?? .min, localWriters), now: now)
    }

    /// ``settledClock(now:localWriters:)`` of the event clock `clock` (microseconds).
    private func settledClock(_ clock: Int64?, now: ContinuousClock.Instant) -> Int64? {
        guard let clock else { return nil }
        let horizon = now - .milliseconds(lateness)
        var settled = clock.saturating(minus: latenessMicroseconds)
        if let sample = clockSamples.last(where: { $0.wall <= horizon }) {
            settled = min(settled, sample.clock.saturating(plus: (horizon - sample.wall).microseconds))
        } else if let oldest = clockSamples.first {
            settled = min(settled, oldest.clock.saturating(minus: (oldest.wall - horizon).microseconds))
        }
        return settled
    }

    /// The earliest event time an input can still bring, in whole milliseconds rounded up, so that a
    /// record's time is below it exactly when it is below the floor in microseconds (`.max`: none
    /// can bring anything).
    ///
    /// An input read to its end holds every record for ``lateness`` after the merge took its first
    /// one: the first batch of a burst (at a start, or after a rebalance) puts the clock at the
    /// burst's latest time, and the records of its other inputs, produced in the same burst with
    /// earlier times, may reach Kafka a moment later, while the consumer still sees those inputs
    /// at their ends. Without a clock of the lateness ago to settle on, a burst's messages went
    /// before their conversations, and were dead-lettered as of unknown conversations.
    func floor(now: ContinuousClock.Instant) -> Int64 {
        let local = localWriters()
        return EventMicroseconds.milliseconds(
            roundingUp: floor(now: now, clock: eventClock(now: now, local: local), local: local))
    }

    /// ``floor(now:)`` in microseconds, with the event clock `clock` and the local writers as `local` says.
    private func floor(now: ContinuousClock.Instant, clock: Int64?, local: [LocalProgressBoard.Reading]) -> Int64 {
        let settled = isSettling(now: now) ? .min : settledClock(clock, now: now)
        var floor = Int64.max
        for source in sources.values {
            floor = min(
                floor, source.lagging ? source.latest.map(EventMicroseconds.microseconds) ?? .min : settled ?? .max)
        }
        for (index, (topic, writers)) in markedTopicList.enumerated() {
            let reading = local.isEmpty ? nil : local[index]
            // Per writer, the later of what Kafka brought and what the writer, if it is local, says
            // now; `.min` for a writer not heard of yet.
            let topicFloor = withUnsafeTemporaryAllocation(of: Int64.self, capacity: Int(writers)) { writerFloors in
                writerFloors.initialize(repeating: .min)
                for (task, heard) in marks[topic] ?? [:] where task >= 0 && task < writers {
                    // A mark this instance wrote, of a task it still holds, moves on with the clock.
                    let alive = heard.local && reading?.held.contains(task) == true
                    // Its `.finished` held only while it had no input: what it has now is on the
                    // board, which this reader hears once it has read the writer's records (below).
                    // Taken as the later floor, it let through every record the writer later held.
                    writerFloors[Int(task)] =
                        alive && heard.mark == .finished
                        ? .min
                        : writerFloor(of: heard.mark, alive: alive ? heard.readAt : nil, now: now, settled: settled)
                }
                // A local writer's records not read yet bring their own times; after them, its mark holds.
                for (task, mark, madeAt, unread) in reading?.current ?? [] where task >= 0 && task < writers {
                    let local = min(
                        writerFloor(of: mark, alive: madeAt, now: now, settled: settled),
                        EventMicroseconds.microseconds(unread))
                    writerFloors[Int(task)] = max(writerFloors[Int(task)], local)
                }
                return writerFloors.min() ?? .max
            }
            floor = min(floor, topicFloor)
        }
        return floor
    }

    /// Whether less than ``lateness`` has passed since the merge took its first record.
    private func isSettling(now: ContinuousClock.Instant) -> Bool {
        firstRead.map { now - $0 < .milliseconds(lateness) } ?? false
    }

    /// The earliest event time (microseconds) a writer with `mark` can still bring. An idle mark speaks of the time
    /// it was made, less the lateness (a record may still reach the writer that late); it moves on
    /// with the wall clock since `alive` only for a writer known to be alive then and since (a
    /// local writer that still holds its task: its process is this one). A writer in another
    /// instance may have died just after its mark: its task's next owner will write the records of
    /// the messages that came meanwhile, and a floor that had moved on would have let later records
    /// go before them.
    ///
    /// A `.finished` writer in this instance has no floor: when it reads a record, its mark on the
    /// board says so at once. One in another instance says so only at its next send, up to
    /// ``markInterval`` later, and that mark may take as long as a record to come: its floor is
    /// `settled` (the floor of this merge's inputs read to their end, microseconds; nil: it has no
    /// event clock, and no floor) less ``lateness`` and ``markInterval``. Taken as no floor, it let a
    /// reader fold its device updates before the fanout records of messages that instance read
    /// meanwhile, though they came within the lateness.
    private func writerFloor(
        of mark: ProgressMark, alive: ContinuousClock.Instant?, now: ContinuousClock.Instant, settled: Int64?
    ) -> Int64 {
        switch mark {
        case .at(let time): EventMicroseconds.microseconds(time)
        case .idle(let since):
            since.saturating(plus: alive.map { (now - $0).microseconds } ?? 0).saturating(minus: latenessMicroseconds)
        case .finished:
            alive == nil
                ? settled?.saturating(minus: latenessMicroseconds.saturating(plus: markInterval.microseconds)) ?? .max
                : .max
        }
    }

    /// A stage-1 task's mark: the floor of the inputs named (those that make its records), of what
    /// it has buffered, and of `held` (the earliest time a message its state holds back can be
    /// released). An input read to its end moves on with the wall clock from its latest record if
    /// that was read within ``recentInput``, else from `instanceClock` (the event clock of the
    /// instance's busiest task): a quiet partition does not hold stage 2 back. So does an input
    /// that lags but brought nothing for ``maximumWait``: the task waits it out itself.
    /// `instanceClock` is in microseconds, as ``settledClock(now:localWriters:)``.
    ///
    /// A `.at` mark is a whole millisecond: the inputs' floor in microseconds is rounded up, as
    /// ``floor(now:)`` rounds, so that it names the first millisecond those inputs can still bring.
    /// Rounded down, it named the one before while the floor was inside a millisecond, and a reader
    /// held that millisecond's records of the other writers until the next mark (in the benchmark,
    /// most of stage 2's waits).
    func mark(
        of inputs: [String], held: Int64?, includingBuffered: Bool = true, instanceClock: Int64?,
        now: ContinuousClock.Instant
    ) -> ProgressMark {
        var fixed = min(includingBuffered ? earliest ?? .max : .max, held ?? .max)
        var idleSince: Int64?
        var seen = false
        for name in inputs {
            guard let source = sources[name] else { continue }
            seen = true
            if source.lagging && now - source.readAt < maximumWait {
                fixed = min(fixed, source.latest ?? .min)
            } else if let latest = source.latest, now - source.readAt < Self.recentInput {
                idleSince = min(
                    idleSince ?? .max,
                    EventMicroseconds.microseconds(latest).saturating(plus: (now - source.readAt).microseconds))
            } else if let instanceClock {
                idleSince = min(idleSince ?? .max, instanceClock)
            }
        }
        if !seen, let instanceClock { idleSince = instanceClock }
        if fixed != .max {
            let idle = idleSince.map {
                EventMicroseconds.milliseconds(roundingUp: $0.saturating(minus: latenessMicroseconds))
            }
            return .at(min(fixed, idle ?? .max))
        }
        return idleSince.map { .idle(since: $0) } ?? .finished
    }

    /// How recently an input must have brought a record for its own time to drive its task's mark.
    static var recentInput: Duration { .seconds(1) }

    /// Takes out, in order, the records that may be folded now: those below every floor, and
    /// those that waited ``maximumWait`` (with everything before them). `forced` counts the latter;
    /// `waited` gets how long each record taken out was buffered, from its read until now.
    mutating func release(
        now: ContinuousClock.Instant, predicting: Bool = false, forced: inout Int, waited: inout [Duration]
    ) -> [DecodedInput<Input>] {
        keepHeardClock(now: now)
        readLocalWriters()
        let local = localReadings
        let clock = eventClock(now: now, local: local)
        noteClock(clock, now: now)
        nextRelease = nil
        guard let first = places.min else { return [] }
        let floor = floor(now: now, clock: clock, local: local)
        // The latest place among the overdue records: it and everything before it go now.
        var overdue: Place?
        for index in front..<arrivals.count where inputs[index] != nil {
            guard now - arrivals[index].arrived >= maximumWait else { break }
            overdue = max(overdue ?? arrivals[index].place, arrivals[index].place)
        }
        guard EventMicroseconds.microseconds(first.order.milliseconds) < floor || overdue.map({ first <= $0 }) == true
        else {
            if predicting { nextRelease = wallClockRelease(now: now, floor: floor, local: local) }
            return []
        }
        var released: [DecodedInput<Input>] = []
        while let next = places.min {
            if EventMicroseconds.microseconds(next.order.milliseconds) >= floor {
                guard let overdue, next <= overdue else { break }
                forced += 1
            }
            places.removeMin()
            if let latestFolded, next.order.compared(to: latestFolded) < 0 {
                foldedLate += 1
            } else {
                latestFolded = next.order
            }
            let index = next.sequence - firstSequence
            waited.append(now - arrivals[index].arrived)
            released.append(inputs[index].take()!)
        }
        dropFolded()
        if let passed = floor != .max
            ? floor : released.last.map({ EventMicroseconds.microseconds($0.order.milliseconds) })
        {
            passedFloor = max(passedFloor, passed)
        }
        if predicting { nextRelease = wallClockRelease(now: now, floor: floor, local: local) }
        return released
    }

    /// ``nextRelease`` as of `now`, with the floor `floor` (microseconds) found then. The floors are
    /// looked at again where they would let the earliest record go, at most ``wallClockStep`` ahead:
    /// if they moved on with the wall clock as far, the wall clock holds the record (or brings that
    /// moment nearer), and that instant is the answer.
    private func wallClockRelease(
        now: ContinuousClock.Instant, floor: Int64, local: [LocalProgressBoard.Reading]
    ) -> ContinuousClock.Instant? {
        guard let first = places.min else { return nil }
        // The oldest record still waiting ends its maximum wait first (arrival order).
        let overdue = front < arrivals.count ? arrivals[front].arrived + maximumWait : nil
        let time = EventMicroseconds.microseconds(first.order.milliseconds)
        var now = now
        var floor = floor
        if isSettling(now: now), let firstRead {
            // The inputs read to their end hold everything until then: look on from there.
            now = firstRead + .milliseconds(lateness)
            floor = self.floor(now: now, clock: eventClock(now: now, local: local), local: local)
            if time < floor { return min(now, overdue ?? now) }
        }
        let needed = time.saturating(plus: 1).saturating(minus: floor)
        guard needed > 0 else { return nil }
        let step = min(needed, Self.wallClockStep)
        let later = now + .microseconds(step)
        let floorThen = self.floor(now: later, clock: eventClock(now: later, local: local), local: local)
        guard floorThen.saturating(minus: floor) >= step else { return nil }
        return min(later, overdue ?? later)
    }

    /// How far ahead (microseconds) ``nextRelease`` looks.
    static var wallClockStep: Int64 { 5_000 }

    /// Moves `front` past the folded records, and drops them once they are most of the arrays.
    private mutating func dropFolded() {
        while front < inputs.count, inputs[front] == nil { front += 1 }
        guard front >= 1_024 || front == inputs.count, front * 2 >= inputs.count else { return }
        inputs.removeFirst(front)
        arrivals.removeFirst(front)
        firstSequence += front
        front = 0
    }

    /// Where the records still buffered start, found in one pass.
    struct BufferedOffsets: Sendable {
        /// The lowest offset of each topic (offsets are not committed past them).
        var byTopic: [String: Int64] = [:]
        /// The lowest offset of each key and topic of the task's own partition: the merge folds in
        /// event-time order, so a key may have folded a record at a later offset than one still here.
        var byKey: [String: [String: Int64]] = [:]
    }

    /// The lowest offsets still buffered, by topic and by key.
    func bufferedOffsets() -> BufferedOffsets {
        var oldest = BufferedOffsets()
        for case let input? in inputs[front...] {
            let record = input.record
            if record.offset < oldest.byTopic[record.topic] ?? .max { oldest.byTopic[record.topic] = record.offset }
            guard input.partitioned else { continue }
            let key = input.key
            if record.offset < oldest.byKey[key]?[record.topic] ?? .max {
                oldest.byKey[key, default: [:]][record.topic] = record.offset
            }
        }
        return oldest
    }
}

extension Int64 {
    /// `self + other`, held at `.min` / `.max` instead of overflowing: `.min` stands for "no floor
    /// yet" (an input waiting in Kafka before its first record) and must stay the lowest time.
    func saturating(plus other: Int64) -> Int64 {
        let (sum, overflow) = addingReportingOverflow(other)
        return overflow ? (other > 0 ? .max : .min) : sum
    }

    /// `self - other`, held at `.min` / `.max` instead of overflowing.
    func saturating(minus other: Int64) -> Int64 {
        let (difference, overflow) = subtractingReportingOverflow(other)
        return overflow ? (other > 0 ? .min : .max) : difference
    }
}

/// Event times in microseconds, as the merge keeps its clocks: `.min` and `.max` (no floor, no
/// bound) stay themselves.
enum EventMicroseconds {
    /// `milliseconds` in microseconds.
    static func microseconds(_ milliseconds: Int64) -> Int64 {
        let (product, overflow) = milliseconds.multipliedReportingOverflow(by: 1_000)
        return overflow ? (milliseconds < 0 ? .min : .max) : product
    }

    /// `microseconds` in whole milliseconds, rounded down: a clock or a floor said no later than it is.
    static func milliseconds(roundingDown microseconds: Int64) -> Int64 {
        guard microseconds != .min, microseconds != .max else { return microseconds }
        let (quotient, remainder) = microseconds.quotientAndRemainder(dividingBy: 1_000)
        return remainder < 0 ? quotient - 1 : quotient
    }

    /// `microseconds` in whole milliseconds, rounded up: a whole millisecond is below the result
    /// exactly when it is below `microseconds`.
    static func milliseconds(roundingUp microseconds: Int64) -> Int64 {
        guard microseconds != .min, microseconds != .max else { return microseconds }
        let (quotient, remainder) = microseconds.quotientAndRemainder(dividingBy: 1_000)
        return remainder > 0 ? quotient + 1 : quotient
    }
}
