import DequeModule
import NotifyKafka
import Synchronization

/// The progress marks of one instance's tasks, shared in memory with the readers in the same
/// instance: a reader need not wait for a local writer's mark to make the round trip through Kafka
/// (``PipelineSettings/markInterval``, then produce and fetch), which is most of what the event-time
/// merge costs in latency when one instance runs both stages.
///
/// A mark speaks only of the records written after it; the records written before it must have been
/// read first. So every record a local task writes to a marked topic carries a sequence number per
/// writer and partition (``header``, with the board's ``token``), and a reader takes a local mark
/// only once it has read that writer's latest record in its partition, and only once there is one:
/// the records an earlier owner of the writer's task wrote (another instance, before a crash or a
/// rebalance) carry no number of this board, and come before the first record of this one. So that a
/// writer with nothing to say to a partition is heard too, it writes a numbered *fence* (a mark
/// record of its own) to every partition when it is taken (``fence(topic:task:partitions:)``). Marks
/// of other instances, and of local writers whose records are still on their way, come through
/// Kafka as before.
///
/// The readers say here which writers' records they have read (``noteRead(topic:partition:seen:)``):
/// a writer need not send its marks through Kafka to a partition whose reader is in this instance
/// and has read its every record there (``currentWriters(topic:)``), which spares a well-partitioned
/// run the mark records of its repartition topics.
///
/// A busy writer nearly always has records on their way to a partition, so its reader there would
/// seldom find every record read; the board therefore also keeps the event times of the records a
/// local writer numbered to a partition with a local reader (``Unread``): the earliest time that
/// writer can still bring there is then the earlier of its mark and the earliest of those not read yet.
final class LocalProgressBoard: Sendable {
    /// A writer task's latest mark, when it was made, the sequence number of the latest record it
    /// wrote to each partition, whether it wrote its fences since it was taken, and, per partition
    /// with a local reader, the times of its records there that the reader may not have read.
    /// A class, read and changed only under the board's lock: the clocks and floors of every task
    /// read the writers at every pass, and a struct would be copied out of its table each time, a
    /// retain and a release for each of its tables.
    final class Writer {
        var mark: ProgressMark = .finished
        var madeAt: ContinuousClock.Instant?
        /// Partition → the sequence number of the latest record written there (0: none yet). Arrays
        /// by partition, not hash tables: every reading looks at each writer's entry for its partition.
        private(set) var lastSequences: [Int64] = []
        var fenced = false
        /// Partition → the records there its local reader may not have read (nil: no local reader).
        private var unread: [Unread?] = []

        init() {}

        /// The sequence number of the latest record written to `partition`, if any.
        func lastSequence(in partition: Int32) -> Int64? {
            let index = Int(partition)
            guard index >= 0, index < lastSequences.count, lastSequences[index] > 0 else { return nil }
            return lastSequences[index]
        }

        /// Gives the next sequence number in `partition` to a record of event time `time` (`.max`:
        /// a fence, which brings no record; `.min`: a record whose time is not known).
        func next(in partition: Int32, time: Int64) -> Int64 {
            let index = Int(partition)
            precondition(index >= 0, "a record numbered for partition \(partition)")
            if lastSequences.count <= index {
                lastSequences += repeatElement(0, count: index + 1 - lastSequences.count)
            }
            lastSequences[index] += 1
            let sequence = lastSequences[index]
            if index < unread.count { unread[index]?.append(sequence: sequence, time: time) }
            return sequence
        }

        /// Skips one number in every partition written to, and starts tracking there again after it.
        func skipSequence() {
            for index in lastSequences.indices where lastSequences[index] > 0 {
                lastSequences[index] += 1
                if index < unread.count { unread[index]?.restart(after: lastSequences[index]) }
            }
        }

        /// Tracks the records written to `partition` from now on (``Unread``), unless it does already.
        func track(_ partition: Int32) {
            let index = Int(partition)
            guard index >= 0 else { return }
            if unread.count <= index { unread += repeatElement(nil, count: index + 1 - unread.count) }
            if unread[index] == nil { unread[index] = Unread(trackedAfter: lastSequence(in: partition) ?? 0) }
        }

        /// Stops tracking the records written to `partition`.
        func untrack(_ partition: Int32) {
            let index = Int(partition)
            if index >= 0, index < unread.count { unread[index] = nil }
        }

        /// The earliest event time among the records written to `partition` after `seen` (see
        /// ``Unread/earliest(after:)``); nil when they are not all tracked.
        func earliestUnread(in partition: Int32, after seen: Int64) -> Int64? {
            let index = Int(partition)
            guard index >= 0, index < unread.count else { return nil }
            return unread[index]?.earliest(after: seen)
        }
    }

    /// The writers of one topic, in an array by task, not a hash table: the readings go through every
    /// writer, and the current writers of every partition (``currentWriters(topic:)``) look each one
    /// up for each reader: 65,536 lookups per mark interval at 256 partitions.
    typealias WriterTable = TaskIndexedTable<Writer>

    /// The event times of the records one writer numbered to one partition after ``trackedAfter``,
    /// as far as the earliest of those its local reader has not read yet: a sliding-window minimum,
    /// (sequence, time) pairs with rising times, so the first of those after what the reader has
    /// read is that earliest time.
    struct Unread: Sendable {
        /// The records numbered up to this one are not tracked (numbered before the reader came, or
        /// before the window last overflowed): a reader that has not read them learns nothing here.
        var trackedAfter: Int64
        private var minima: Deque<(sequence: Int64, time: Int64)> = []
        /// At most this many pairs are kept (records with rising times, unread: a reader far behind);
        /// beyond, tracking starts again from the latest record.
        static let limit = 1_024

        init(trackedAfter: Int64) {
            self.trackedAfter = trackedAfter
        }

        mutating func append(sequence: Int64, time: Int64) {
            while let last = minima.last, last.time >= time { minima.removeLast() }
            minima.append((sequence, time))
            if minima.count > Self.limit { restart(after: sequence) }
        }

        /// Forgets what was tracked: the records up to `sequence` are not known any more.
        mutating func restart(after sequence: Int64) {
            trackedAfter = sequence
            minima.removeAll()
        }

        /// The earliest event time among the records after `seen` (`.max`: there are none), if every
        /// one of them is tracked; forgets those up to `seen`.
        mutating func earliest(after seen: Int64) -> Int64? {
            guard seen >= trackedAfter else { return nil }
            while let first = minima.first, first.sequence <= seen { minima.removeFirst() }
            return minima.first?.time ?? .max
        }
    }

    /// The header carrying `<token>:<sequence>` on records of marked topics.
    static let header = "notify-sequence"

    /// Tells this board's records from those of earlier runs and other instances.
    let token: String
    /// `<token>:`, the start of the ``header`` of this board's records.
    private let tokenPrefix: [UInt8]
    /// Topic → writer task → where it stands.
    private let writers = Mutex<[String: WriterTable]>([:])
    /// Topic → partition → writer task → the highest sequence number its local reader has read.
    private let readers = Mutex<[String: [Int32: ReadSequences]]>([:])

    init(token: String = String(UInt64.random(in: 0...UInt64.max), radix: 36)) {
        self.token = token
        tokenPrefix = Array("\(token):".utf8)
    }

    /// The ``header`` value of sequence number `sequence` of this board.
    private func headerValue(_ sequence: Int64) -> [UInt8] {
        var value = tokenPrefix
        value.reserveCapacity(tokenPrefix.count + 20)
        DecimalASCII.append(sequence, to: &value)
        return value
    }

    /// Numbers the records `task` writes to `topic` (each with its partition set), in order, in the
    /// ``header``.
    func number(_ records: inout [OutgoingRecord], topic: String, task: Int32) {
        writers.withLock { writers in
            // Looked up once for all the records, and kept if it numbered any.
            let known = writers[topic]?[task]
            let writer = known ?? Writer()
            var numbered = false
            for index in records.indices where records[index].topic == topic && !records[index].value.isEmpty {
                guard let partition = records[index].partition else { continue }
                let sequence = writer.next(in: partition, time: records[index].timestampMilliseconds ?? .min)
                records[index].headers.append(KafkaHeader(name: Self.header, value: headerValue(sequence)))
                numbered = true
            }
            if known == nil && numbered { writers[topic, default: WriterTable()][task] = writer }
        }
    }

    /// Makes `mark` the latest of `task` writing `topic`.
    func publish(_ mark: ProgressMark, topic: String, task: Int32, at now: ContinuousClock.Instant) {
        publish(CollectionOfOne((task: task, mark: mark)), topic: topic, at: now)
    }

    /// Makes each mark the latest of its task writing `topic`, under one lock: a stage tells every
    /// task's marks after each batch.
    func publish(
        _ marks: some Collection<(task: Int32, mark: ProgressMark)>, topic: String, at now: ContinuousClock.Instant
    ) {
        writers.withLock { writers in
            var known = writers.removeValue(forKey: topic) ?? WriterTable()
            defer { writers[topic] = known }
            for (task, mark) in marks {
                let writer: Writer
                if let found = known[task] {
                    writer = found
                } else {
                    writer = Writer()
                    known[task] = writer
                }
                writer.mark = mark
                writer.madeAt = now
            }
        }
    }

    /// Forgets the marks of the tasks given up (their next owner may be another instance); their
    /// sequence numbers go on, should they come back, so that no number is given twice. Each skips
    /// one number in every partition it wrote to: a reader that read its records before cannot
    /// count as having read everything until it reads one written after the task came back (which
    /// comes after whatever the owner meanwhile wrote).
    func remove(tasks: [Int32]) {
        writers.withLock { writers in
            for topic in writers.keys {
                for task in tasks {
                    guard let writer = writers[topic]?[task] else { continue }
                    writer.madeAt = nil
                    writer.fenced = false
                    writer.skipSequence()
                }
            }
        }
    }

    /// The fences of `task` writing `topic`, if it has written none since it was taken: a value-less
    /// record to each of `partitions`, numbered like its other records (the caller adds its mark).
    /// A reader that has read its fence knows it has read whatever the task's earlier owners wrote
    /// there, and takes the task's local marks from then on (``writers(of:partition:seen:)``).
    func fence(topic: String, task: Int32, partitions: Int32) -> [OutgoingRecord]? {
        writers.withLock { writers in
            let writer = writers[topic]?[task] ?? Writer()
            guard !writer.fenced else { return nil }
            writer.fenced = true
            let fences = (0..<partitions).map { partition in
                let sequence = writer.next(in: partition, time: .max)
                return OutgoingRecord(
                    topic: topic, key: nil, value: [],
                    headers: [KafkaHeader(name: Self.header, value: headerValue(sequence))],
                    partition: partition)
            }
            writers[topic, default: WriterTable()][task] = writer
            return fences
        }
    }

    /// Says that the reader of `partition` of `topic` in this instance has read its local writers'
    /// records up to the sequence numbers in `seen` (writer → the highest read).
    /// The local writers' records to that partition are tracked from then on (``Unread``).
    func noteRead(topic: String, partition: Int32, seen: ReadSequences) {
        readers.withLock { $0[topic, default: [:]][partition] = seen }
        writers.withLock { writers in
            for (_, writer) in writers[topic] ?? WriterTable() { writer.track(partition) }
        }
    }

    /// Forgets the readers of `partitions` of `topics`, given up (their next owner may be another
    /// instance): their writers send their marks through Kafka again.
    func forgetReaders(of topics: some Sequence<String>, partitions: [Int32]) {
        let topics = Array(topics)
        readers.withLock { readers in
            for topic in topics {
                for partition in partitions { readers[topic]?[partition] = nil }
            }
        }
        writers.withLock { writers in
            for topic in topics {
                for (_, writer) in writers[topic] ?? WriterTable() {
                    for partition in partitions { writer.untrack(partition) }
                }
            }
        }
    }

    /// Partition of `topic` → the local writers whose every record there its local reader has read:
    /// that reader takes their marks from this board, and they need not go through Kafka. Asked at
    /// every mark interval, it compares every pair of a partition read here and a writer (at 256
    /// partitions, most of what announcing the marks costs), and gives sets of bits, not hash sets.
    /// The pairs are taken writer by writer: a writer's fields are a class's, each access to them
    /// checked at run time, so each writer is looked at once and its sequence numbers compared with
    /// every reader's in a plain loop (taken reader by reader, 11% of a profile at 256 partitions).
    func currentWriters(topic: String) -> [Int32: TaskSet] {
        let seen = Array(readers.withLock { $0[topic] ?? [:] })
        return writers.withLock { writers in
            let writers = writers[topic] ?? WriterTable()
            var tasks = [TaskSet](repeating: TaskSet(capacity: writers.taskCount), count: seen.count)
            for (task, writer) in writers where writer.madeAt != nil {
                let written = writer.lastSequences
                for index in seen.indices {
                    let partition = Int(seen[index].key)
                    guard partition >= 0, partition < written.count, written[partition] > 0,
                        seen[index].value[task] == written[partition]
                    else { continue }
                    tasks[index].insert(task)
                }
            }
            var current: [Int32: TaskSet] = [:]
            for index in seen.indices where !tasks[index].isEmpty { current[seen[index].key] = tasks[index] }
            return current
        }
    }

    /// The local writers of one topic as one reader sees them at one moment (``writers(of:partition:seen:)``).
    struct Reading: Sendable {
        /// The latest mark, and when it was made, of each local writer that has written to the
        /// reader's partition and whose records there the reader has read up to its first tracked
        /// one, with the earliest event time of those it has not read (`.max`: it has read them all).
        var current: [(task: Int32, mark: ProgressMark, madeAt: ContinuousClock.Instant, unread: Int64)] = []
        /// The writer tasks that are this instance's now (they published a mark and were not given up since).
        var held = TaskSet()
    }

    /// The highest sequence number a reader has read of each local writer (writer task → number;
    /// sequence numbers start at 1), in an array by task: a reading looks up every writer's at each
    /// release, and a hash table cost a hash per writer.
    typealias ReadSequences = TaskIndexedTable<Int64>

    /// Writer tasks (their partition numbers, from 0) as bits: a merge reads the board at every
    /// release, and a set of them would be a hash table built each time.
    struct TaskSet: Sendable, Equatable, ExpressibleByArrayLiteral, Sequence {
        /// Tasks 0 to 63.
        private var first: UInt64 = 0
        /// Tasks from 64 on, 64 to a word.
        private var more: [UInt64] = []

        init() {}

        /// An empty set with room for tasks 0 to `capacity` - 1 (more grow it): a set built writer by
        /// writer for every partition would otherwise grow its words one at a time.
        init(capacity: Int) {
            removeAll(keepingRoomFor: capacity)
        }

        init(arrayLiteral tasks: Int32...) {
            for task in tasks { insert(task) }
        }

        var isEmpty: Bool { first == 0 && more.allSatisfy { $0 == 0 } }

        /// Empties the set, with room kept, or made, for tasks 0 to `capacity` - 1 (see ``init(capacity:)``).
        mutating func removeAll(keepingRoomFor capacity: Int) {
            first = 0
            let words = capacity > 64 ? (capacity - 1) / 64 : 0
            for index in more.indices { more[index] = 0 }
            if more.count < words { more += repeatElement(0, count: words - more.count) }
        }

        static func == (lhs: TaskSet, rhs: TaskSet) -> Bool {
            lhs.first == rhs.first
                && (0..<Swift.max(lhs.more.count, rhs.more.count)).allSatisfy { lhs.word($0) == rhs.word($0) }
        }

        /// Word `index` of ``more``, 0 past its end.
        private func word(_ index: Int) -> UInt64 { index < more.count ? more[index] : 0 }

        mutating func insert(_ task: Int32) {
            guard task >= 0 else { return }
            guard task >= 64 else {
                first |= 1 << UInt64(task)
                return
            }
            let word = Int(task / 64) - 1
            if more.count <= word { more += repeatElement(0, count: word + 1 - more.count) }
            more[word] |= 1 << UInt64(task % 64)
        }

        func contains(_ task: Int32) -> Bool {
            guard task >= 0 else { return false }
            guard task >= 64 else { return first & (1 << UInt64(task)) != 0 }
            return word(Int(task / 64) - 1) & (1 << UInt64(task % 64)) != 0
        }

        /// The tasks in the set, lowest first.
        func makeIterator() -> Iterator { Iterator(first: first, more: more) }

        struct Iterator: IteratorProtocol {
            fileprivate let more: [UInt64]
            /// The bits of the word being read not given yet.
            private var bits: UInt64
            /// Which word that is: -1 for ``first``, then the index in ``more``.
            private var word = -1

            fileprivate init(first: UInt64, more: [UInt64]) {
                self.more = more
                bits = first
            }

            mutating func next() -> Int32? {
                while bits == 0 {
                    word += 1
                    guard word < more.count else { return nil }
                    bits = more[word]
                }
                let bit = bits.trailingZeroBitCount
                bits &= bits - 1
                return Int32((word + 1) * 64 + bit)
            }
        }
    }

    /// The local writers of `topic` as the reader of `partition` sees them, having read their records
    /// up to the sequence numbers in `seen` (writer → the highest read): taken under one lock, so a
    /// merge computing its clock and floors asks once.
    func writers(of topic: String, partition: Int32, seen: ReadSequences) -> Reading {
        var reading = Reading()
        read(&reading, of: topic, partition: partition, seen: seen)
        return reading
    }

    /// ``writers(of:partition:seen:)`` written over `reading`, whose storage it reuses: a merge takes
    /// a reading at every release of every task, and built anew, each cost two allocations (about 7
    /// per message in the pipeline benchmark, with the merge's list of them).
    func read(_ reading: inout Reading, of topic: String, partition: Int32, seen: ReadSequences) {
        writers.withLock { writers in
            // The topic's table looked up once.
            let writers = writers[topic] ?? WriterTable()
            reading.held.removeAll(keepingRoomFor: writers.taskCount)
            reading.current.removeAll(keepingCapacity: true)
            reading.current.reserveCapacity(writers.count)
            for (task, writer) in writers {
                guard let madeAt = writer.madeAt else { continue }
                reading.held.insert(task)
                guard let last = writer.lastSequence(in: partition), let read = seen[task] else { continue }
                if last == read {
                    reading.current.append((task, writer.mark, madeAt, .max))
                } else if let unread = writer.earliestUnread(in: partition, after: read) {
                    reading.current.append((task, writer.mark, madeAt, unread))
                }
            }
        }
    }

    /// For each reader (its partition, and the sequence numbers it has read of each writer), the
    /// latest event clock `clock` gives for the local writers of `topic` whose every record in that
    /// partition it has read: the writers ``writers(of:partition:seen:)`` lists with nothing unread;
    /// nil for a reader caught up with none. An event clock needs no more, and the instance clock
    /// asks for every task's at each pass that makes records: one look under the lock for all of
    /// them, the writers taken by their clocks, latest first, and each reader stopping at the first
    /// it has caught up with. (Looked at reader by reader, every writer for every reader, it cost the
    /// square of the partitions: 13% of a profile at 64.)
    func latestCaughtUpClocks(
        of topic: String, readers: [(partition: Int32, seen: ReadSequences)],
        clock: (ProgressMark, ContinuousClock.Instant) -> Int64?
    ) -> [Int64?] {
        writers.withLock { writers in
            var ranked: [(clock: Int64, task: Int32, writer: Writer)] = []
            for (task, writer) in writers[topic] ?? WriterTable() {
                guard let madeAt = writer.madeAt, let time = clock(writer.mark, madeAt) else { continue }
                ranked.append((time, task, writer))
            }
            ranked.sort { $0.clock > $1.clock }
            return readers.map { reader in
                ranked.first { entry in
                    entry.writer.lastSequence(in: reader.partition).map { reader.seen[entry.task] == $0 } ?? false
                }?.clock
            }
        }
    }

    /// The ``header`` of a mark record this board's instance sends: its token, and no sequence
    /// number (0: mark records are not numbered).
    var markRecordHeader: KafkaHeader { KafkaHeader(name: Self.header, value: headerValue(0)) }

    /// The sequence number of a record written by a task of this board (0 for a mark record), if it is one.
    func sequence(of record: KafkaRecord) -> Int64? {
        guard let value = record.headers.first(where: { $0.name == Self.header })?.value,
            value.starts(with: tokenPrefix)
        else { return nil }
        return DecimalASCII.parse(value[tokenPrefix.count...])
    }
}
