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
/// rebalance) carry no number of this board, and come before the first record of this one. Marks of
/// other instances, and of local writers whose records are still on their way or that have written
/// nothing to the partition yet, come through Kafka as before.
final class LocalProgressBoard: Sendable {
    /// A writer task's latest mark, when it was made, and the sequence number of the latest record it
    /// wrote to each partition.
    struct Writer: Sendable {
        var mark: ProgressMark = .finished
        var madeAt: ContinuousClock.Instant?
        var lastSequence: [Int32: Int64] = [:]
    }

    /// The header carrying `<token>:<sequence>` on records of marked topics.
    static let header = "notify-sequence"

    /// Tells this board's records from those of earlier runs and other instances.
    let token: String
    /// Topic → writer task → where it stands.
    private let writers = Mutex<[String: [Int32: Writer]]>([:])

    init(token: String = String(UInt64.random(in: 0...UInt64.max), radix: 36)) {
        self.token = token
    }

    /// Numbers the records `task` writes to `topic` (each with its partition set), in order, in the
    /// ``header``.
    func number(_ records: inout [OutgoingRecord], topic: String, task: Int32) {
        writers.withLock { writers in
            var writer = writers[topic]?[task] ?? Writer()
            for index in records.indices where records[index].topic == topic && !records[index].value.isEmpty {
                guard let partition = records[index].partition else { continue }
                let sequence = (writer.lastSequence[partition] ?? 0) + 1
                writer.lastSequence[partition] = sequence
                records[index].headers.append(KafkaHeader(name: Self.header, string: "\(token):\(sequence)"))
            }
            writers[topic, default: [:]][task] = writer
        }
    }

    /// Makes `mark` the latest of `task` writing `topic`.
    func publish(_ mark: ProgressMark, topic: String, task: Int32, at now: ContinuousClock.Instant) {
        writers.withLock { writers in
            writers[topic, default: [:]][task, default: Writer()].mark = mark
            writers[topic, default: [:]][task, default: Writer()].madeAt = now
        }
    }

    /// Forgets the marks of the tasks given up (their next owner may be another instance); their
    /// sequence numbers go on, should they come back, so that no number is given twice.
    func remove(tasks: [Int32]) {
        writers.withLock { writers in
            for topic in writers.keys {
                for task in tasks { writers[topic]?[task]?.madeAt = nil }
            }
        }
    }

    /// Calls `body` with the latest mark (and when it was made) of each local writer of `topic` that
    /// has written to `partition` and whose every record there the reader has read (`seen`: writer →
    /// the highest sequence number read from it).
    func forEachMark(
        of topic: String, partition: Int32, seen: [Int32: Int64],
        _ body: (_ task: Int32, _ mark: ProgressMark, _ madeAt: ContinuousClock.Instant) -> Void
    ) {
        writers.withLock { writers in
            for (task, writer) in writers[topic] ?? [:] {
                guard let madeAt = writer.madeAt, let last = writer.lastSequence[partition], last == seen[task] else {
                    continue
                }
                body(task, writer.mark, madeAt)
            }
        }
    }

    /// Whether `task`, writing `topic`, is this instance's now (it published a mark and was not
    /// given up since).
    func holds(topic: String, task: Int32) -> Bool {
        writers.withLock { $0[topic]?[task]?.madeAt != nil }
    }

    /// The ``header`` of a mark record this board's instance sends: its token, and no sequence
    /// number (0: mark records are not numbered).
    var markRecordHeader: KafkaHeader { KafkaHeader(name: Self.header, string: "\(token):0") }

    /// The sequence number of a record written by a task of this board (0 for a mark record), if it is one.
    func sequence(of record: KafkaRecord) -> Int64? {
        guard let value = record.headers.string(for: Self.header), let colon = value.lastIndex(of: ":"),
            value[..<colon] == token
        else { return nil }
        return Int64(value[value.index(after: colon)...])
    }
}
