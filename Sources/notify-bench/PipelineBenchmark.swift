import ArgumentParser
import Foundation
import Logging
import NotifyCore
import NotifyKafka
import NotifyPipeline
import Synchronization

/// `notify-bench pipeline`: both stages in this process on a broker, fed message events; prints
/// throughput, then latency from produce to command acknowledged at a fixed offered rate.
struct PipelineBenchmark: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "pipeline",
        abstract: "Messages through both stages: throughput, then p50/p99 latency at an offered rate.",
        discussion: "Needs the topics of Schemas/topics.json on the broker (notify broker creates them)."
    )

    @OptionGroup var broker: BrokerOption
    @Option(help: "Messages for the throughput run.") var count: Int = 100_000
    @Option(help: "Offered messages/s for the latency run.") var rate: Int = 10_000
    @Option(help: "Seconds of the latency run.") var seconds: Int = 5
    @Option(help: "The Schemas directory.") var schemas: String = "Schemas"
    @Option(
        help: "Seconds each task gathers changes before it writes its changelog (the pipeline's pipeline.saveInterval)."
    )
    var saveInterval: Double = 5
    @Option(help: "Milliseconds of the event-time merge's lateness allowance (the pipeline's pipeline.lateness).")
    var lateness: Int64 = 10
    @Option(help: "Milliseconds between the progress marks a stage's tasks send to the topics their readers merge.")
    var markInterval: Int64 = 20
    @Option(help: "Seconds a record waits in the event-time merge at most (the pipeline's pipeline.maxEventTimeWait).")
    var maximumWait: Double = 30
    @Option(
        help: ArgumentHelp(
            """
            Every fifth message comes with a device update of its recipient, produced beside it (tables that \
            change while messages flow), and this share of those updates (0 to 1) goes to another partition than \
            murmur2 of its key gives, as a producer with another partitioner would put it: the pipeline forwards \
            them to the tasks that own their keys. Without it, no table changes during the runs.
            """, valueName: "share"))
    var misplacedTables: Double?
    @Flag(
        help: ArgumentHelp(
            """
            Keep every batch the stages consume, and the decisions made, from the start, so that a throughput run \
            whose messages stop getting commands says which stage read them. Off, they are kept from the latency \
            run on: holding the throughput run's records costs the pipeline's cores a page fault per fresh page.
            """))
    var whereabouts = false
    @Flag(
        help: ArgumentHelp(
            """
            Print, for each tenth of a second of the throughput run, how many records of each topic the stages \
            read and how many of those they wrote were acknowledged: whether both stages work all through the run.
            """))
    var timeline = false
    @Flag(
        help: ArgumentHelp(
            """
            Print the latency run's p50 and p99, and its hops, for each second of sending: whether its tail is the \
            run's start (the first records after the throughput run) or its end (the embedded broker slowing as \
            its logs grow).
            """))
    var latencyBySecond = false
    @Option(
        name: .customShort("X"),
        help: ArgumentHelp(
            "A librdkafka property for the pipeline's clients and the producer feeding it.", valueName: "name=value"))
    var properties: [String] = []

    func validate() throws {
        guard saveInterval >= 0.05 else {
            throw ValidationError("--save-interval wants at least 0.05 seconds, as pipeline.saveInterval")
        }
        if let misplacedTables, !(0...1).contains(misplacedTables) {
            throw ValidationError("--misplaced-tables wants a share from 0 to 1")
        }
        guard maximumWait >= 0.1 else {
            throw ValidationError("--maximum-wait wants at least 0.1 seconds, as pipeline.maxEventTimeWait")
        }
        guard lateness >= 0, markInterval > 0 else {
            throw ValidationError("--lateness wants 0 or more, --mark-interval more than 0 milliseconds")
        }
        guard count > 0, rate > 0, seconds > 0 else {
            throw ValidationError("--count, --rate and --seconds want positive numbers")
        }
    }

    static let identities = 50_000
    static let conversations = 10_000

    func run() async throws {
        var logger = Logger(label: "notify.bench")
        logger.logLevel =
            ProcessInfo.processInfo.environment["NOTIFY_BENCH_LOG_LEVEL"].flatMap { Logger.Level(rawValue: $0) }
            ?? .error
        var client = broker.client
        for property in properties {
            guard let (name, value) = KafkaClientConfiguration.property(property) else {
                throw ValidationError("-X wants name=value, not \(property)")
            }
            client.properties[name] = value
        }
        try await warnIfUsed(client: client, logger: logger)
        // The chat backend's producer, feeding the pipeline.
        let producer = try KafkaProducer(configuration: client, logger: logger)
        try await seed(producer)
        var tableUpdates: TableUpdates?
        if let misplacedTables {
            let devicePartitions =
                try await KafkaAdmin(configuration: client, logger: logger).metadata(of: Topic.devices)?.partitionCount
                ?? 1
            tableUpdates = TableUpdates(share: misplacedTables, devicePartitions: devicePartitions)
        }

        // Tags this run's event and message ids: the changelog topics are shared by every group, so
        // on a broker used before, ids of an earlier run would be recognised as applied already.
        let run = String(UInt32.random(in: 0...UInt32.max), radix: 36)
        let total = rate * seconds
        // The clocks' tables are sized up front: growing them during a run would rehash on the pipeline's cores.
        let acknowledged = CommandClock(capacity: count + total)
        let hops = HopClock(recording: whereabouts)
        let forced = Atomic<Int>(0)
        // Records each stage folded after one later in event-time order (reached it past the lateness).
        let late = Mutex<[StageName: Int]>([:])
        let readLate = Mutex<[String: Int]>([:])
        let lateTotal = { late.withLock { $0.values.reduce(0, +) } }
        let throughputTimeline = timeline ? ThroughputTimeline() : nil
        let busy = Mutex<[StageName: Duration]>([:])
        // How long the latency run's records waited in each stage's event-time merge (converted for the
        // report after the run, not on the stages' actors).
        let mergeWaits = Mutex<[StageName: [Duration]]>([:])
        let decisions = Mutex<[String: [SuppressionReason]]>([:])
        let pipeline = PipelineInstance(
            settings: PipelineSettings(
                client: client, groupId: "bench-\(run)",
                core: try CoreConfiguration.load(schemasDirectory: schemas),
                saveInterval: .milliseconds(Int64(saveInterval * 1000)),
                lateness: .milliseconds(lateness), maximumEventTimeWait: .milliseconds(Int64(maximumWait * 1000)),
                markInterval: .milliseconds(markInterval)),
            observer: PipelineObserver(
                onConsumed: { records in
                    hops.consumed(records)
                    throughputTimeline?.read(records)
                },
                onDecisions: { made in
                    // Read only to say where the messages of a stalled run stopped: kept while the batches are.
                    guard hops.isRecording else { return }
                    decisions.withLock { reasons in
                        for decision in made {
                            reasons[decision.messageId ?? decision.eventId, default: []].append(decision.reason)
                        }
                    }
                },
                onProduced: { records, commands, _ in
                    throughputTimeline?.acknowledged(records)
                    acknowledged.record(commands)
                    hops.acknowledged(records)
                },
                onBusy: { stage, duration in
                    busy.withLock { $0[stage, default: .zero] += duration }
                    throughputTimeline?.worked(stage.rawValue, duration)
                },
                onReleasedByMaximumWait: { _, count in forced.add(count, ordering: .relaxed) },
                onFoldedLate: { stage, count in late.withLock { $0[stage, default: 0] += count } },
                onReadLate: { topic, count in readLate.withLock { $0[topic, default: 0] += count } },
                onEventTimeWaits: { stage, waits in
                    guard hops.isRecording else { return }
                    mergeWaits.withLock { $0[stage, default: []] += waits }
                }),
            logger: logger)
        let running = Task { try await pipeline.run() }
        let ended = Mutex<String?>(nil)
        Task {
            do { try await running.value } catch { ended.withLock { $0 = "\(error)" } }
        }
        /// Where the messages `ids` without a command stopped.
        @Sendable func diagnose(_ ids: [String]) -> String {
            let failure = ended.withLock { $0 }.map { "; the pipeline failed: \($0)" } ?? ""
            guard hops.isRecording else { return hops.whereabouts(of: ids) + failure }
            // How many of them had each list of decisions (stage 1's, then stage 2's).
            let reasons = decisions.withLock { made in
                Dictionary(grouping: ids, by: { made[$0]?.map(\.rawValue).joined(separator: " then ") ?? "none" })
            }
            return hops.whereabouts(of: ids) + "; decisions: "
                + reasons.sorted { $0.key < $1.key }.map { "\($0.value.count) \($0.key)" }.joined(separator: ", ")
                + failure
        }
        while !pipeline.isReady { try await Task.sleep(for: .milliseconds(50)) }

        // Throughput: everything at once.
        let start = ContinuousClock.now
        let cpuBefore = ProcessCPUClock.seconds()
        let sent = Sent(capacity: count)
        throughputTimeline?.start()
        let busyBefore = busy.withLock { $0 }
        try await produceMessages(
            0..<count, run: run, producer: producer, sent: sent, pace: nil, tableUpdates: tableUpdates)
        try await acknowledged.wait(for: count, sent: sent, diagnose: diagnose)
        let elapsed = (ContinuousClock.now - start).seconds
        let cpu = ProcessCPUClock.seconds() - cpuBefore
        print(
            "pipeline: \(count) messages in \(String(format: "%.3f", elapsed)) s = \(Int(Double(count) / elapsed)) messages/s"
                + " (CPU of this process, producer included: \(String(format: "%.3f", cpu)) s = \(Int(cpu / Double(count) * 1e6)) µs per message;"
                + " \(forced.load(ordering: .relaxed)) records released by the maximum wait,"
                + " \(Self.foldedLate(late.withLock { $0 })); \(Self.readLate(readLate.withLock { $0 })))"
                + (tableUpdates?.summary ?? ""))
        let worked = busy.withLock { $0 }.map { ($0.key, ($0.value - (busyBefore[$0.key] ?? .zero)).seconds) }
        print(
            "pipeline: each stage's actor worked "
                + worked.sorted { $0.0.rawValue < $1.0.rawValue }.map {
                    "\($0.0.rawValue) \(String(format: "%.2f", $0.1)) s (\(Int($0.1 / elapsed * 100))%)"
                }.joined(separator: ", ") + " of the run")
        for line in throughputTimeline?.stop() ?? [] { print(line) }

        // Latency at the offered rate.
        hops.startRecording()
        let latencySent = Sent(capacity: total)
        let latencyCPUBefore = ProcessCPUClock.seconds()
        let lateBefore = lateTotal()
        let latencyStart = ContinuousClock.now
        try await produceMessages(
            count..<(count + total), run: run, producer: producer, sent: latencySent, pace: rate,
            tableUpdates: tableUpdates)
        try await acknowledged.wait(for: count + total, sent: latencySent, diagnose: diagnose)
        let latencyCPU = ProcessCPUClock.seconds() - latencyCPUBefore
        print(
            "latency run: CPU \(String(format: "%.2f", latencyCPU)) s over \(String(format: "%.2f", (ContinuousClock.now - latencyStart).seconds)) s"
        )
        let latencies = acknowledged.latencies(since: latencySent).map(\.milliseconds).sorted()
        print(
            "pipeline latency at \(rate) messages/s offered: \(latencies.count) messages, p50 \(String(format: "%.1f", percentile(latencies, 0.5))) ms, p99 \(String(format: "%.1f", percentile(latencies, 0.99))) ms"
                + " (\(lateTotal() - lateBefore) records folded late)"
        )
        print(hops.report(sent: latencySent, acknowledged: acknowledged))
        if latencyBySecond {
            for line in acknowledged.bySecond(since: latencySent, start: latencyStart, hops: hops) { print(line) }
        }
        let waits = mergeWaits.withLock { $0 }
        print(
            "event-time merge waits (p50 / p90 / p99 ms): "
                + StageName.allCases.map { stage in
                    let sorted = (waits[stage] ?? []).sorted().map { $0.seconds * 1000 }
                    guard !sorted.isEmpty else { return "\(stage.rawValue) -" }
                    let figures = [0.5, 0.9, 0.99].map { String(format: "%.1f", percentile(sorted, $0)) }
                    return "\(stage.rawValue) \(figures.joined(separator: " / "))"
                }.joined(separator: ", "))
        running.cancel()
        _ = try? await running.value
        await producer.close()
    }

    /// Says so when `chat.messages` holds records already (an earlier run): the pipeline's new groups
    /// read the whole history first, so the figures come out lower than on a fresh broker, and the
    /// embedded broker keeps about 5 MB per partition, so it can drop records of this run before the
    /// lagging stage 2 reads them, and the run then ends with "no command for a minute".
    private func warnIfUsed(client: KafkaClientConfiguration, logger: Logger) async throws {
        let admin = try KafkaAdmin(configuration: client, logger: logger)
        guard let topic = try await admin.metadata(of: Topic.messages) else { return }
        var held: Int64 = 0
        for partition in 0..<Int32(topic.partitionCount) {
            let (low, high) = try await admin.watermarks(TopicPartition(topic: Topic.messages, partition: partition))
            held += high - low
        }
        guard held > 0 else { return }
        print(
            "pipeline: warning: \(Topic.messages) holds \(held) records of earlier runs; the pipeline reads them first,"
                + " so its figures are lower than on a fresh broker, and the embedded broker (about 5 MB per partition) may drop"
                + " records of this run before stage 2 reads them. Compare runs on fresh brokers (Benchmarks/kafka.sh)."
        )
    }

    /// 50,000 identities, 10,000 two-member conversations, one Android phone per member (state unknown: push).
    private func seed(_ producer: KafkaProducer) async throws {
        var records: [OutgoingRecord] = []
        func add(_ topic: String, _ key: String, _ json: String) {
            records.append(
                OutgoingRecord(topic: topic, key: Array(key.utf8), value: Array(json.utf8), timestampMilliseconds: 0))
        }
        for user in 0..<Self.identities {
            add(
                Topic.identities, "u\(user)",
                #"{"type":"identity.updated","id":"i\#(user)","at":"2026-11-22T09:00:00Z","userId":"u\#(user)","displayName":"User \#(user)"}"#
            )
        }
        for conversation in 0..<Self.conversations {
            let (a, b) = (2 * conversation, 2 * conversation + 1)
            add(
                Topic.conversations, "c\(conversation)",
                #"{"type":"conversation.updated","id":"c\#(conversation)","at":"2026-11-22T09:00:00Z","conversationId":"c\#(conversation)","kind":"direct","members":["u\#(a)","u\#(b)"]}"#
            )
            for user in [a, b] {
                add(Topic.devices, "u\(user)", Self.devices(of: user, id: "d\(user)", at: "2026-11-22T09:00:00Z"))
            }
        }
        _ = try await producer.send(records)
        print(
            "pipeline: seeded \(Self.identities) identities, \(Self.conversations) conversations, \(2 * Self.conversations) devices"
        )
    }

    /// "N folded late", and when N is not 0, which stages folded them ("N folded late: route N").
    /// Where records fold late is not always where they came late: a stage-1 task folds a message
    /// in order while its marks had already let stage 2 past the message's time (it read the message
    /// after they passed it, or, in the tables runs, stage 1 had read nothing yet and marked itself
    /// `.finished`), and stage 2 then folds its fanout records after table records it already let
    /// go. ``readLate(_:)`` names the topics that came late.
    static func foldedLate(_ byStage: [StageName: Int]) -> String {
        late("folded late", StageName.allCases.compactMap { stage in byStage[stage].map { (stage.rawValue, $0) } })
    }

    /// "N read late", and when N is not 0, of which topics ("N read late: chat.messages N"): records
    /// read after their stage had let records go past their time.
    static func readLate(_ byTopic: [String: Int]) -> String {
        late("read late", byTopic.sorted { $0.key < $1.key }.map { ($0.key, $0.value) })
    }

    /// "N `what`", and when N is not 0, the count of each place in `counts`.
    private static func late(_ what: String, _ counts: [(place: String, count: Int)]) -> String {
        let total = counts.reduce(0) { $0 + $1.count }
        guard total > 0 else { return "0 \(what)" }
        return "\(total) \(what): " + counts.map { "\($0.place) \($0.count)" }.joined(separator: ", ")
    }

    /// The `devices.updated` event of `user`'s one phone.
    static func devices(of user: Int, id: String, at: String) -> String {
        #"{"type":"devices.updated","id":"\#(id)","at":"\#(at)","userId":"u\#(user)","devices":[{"deviceId":"u\#(user)-phone","platform":"android","provider":"fcm","token":"t\#(user)","appId":"com.example.chat"}]}"#
    }

    /// The device updates produced beside the messages (see `--misplaced-tables`): `share` of them
    /// in the partition after their key's.
    final class TableUpdates: Sendable {
        let share: Double
        let devicePartitions: Int32
        let produced = Atomic<Int>(0)
        let misplaced = Atomic<Int>(0)

        init(share: Double, devicePartitions: Int) {
            self.share = share
            self.devicePartitions = Int32(devicePartitions)
        }

        /// How many updates went out, and how many misplaced.
        var summary: String {
            ", with \(produced.load(ordering: .relaxed)) device updates, \(misplaced.load(ordering: .relaxed)) of them misplaced"
        }

        /// The device update that comes with message `number`, if one does (every fifth message).
        func record(for number: Int, recipient: Int, run: String, at: String) -> OutgoingRecord? {
            guard number % 5 == 0 else { return nil }
            var record = OutgoingRecord(
                topic: Topic.devices, key: Array("u\(recipient)".utf8),
                value: Array(PipelineBenchmark.devices(of: recipient, id: "d\(run)-\(number)", at: at).utf8))
            let produced = produced.add(1, ordering: .relaxed).newValue
            // Spread evenly: this update is misplaced when the running share falls behind.
            if Double(misplaced.load(ordering: .relaxed)) < share * Double(produced), devicePartitions > 1 {
                misplaced.add(1, ordering: .relaxed)
                record.partition =
                    (KafkaPartitioner.murmur2.partition(of: record.key!, partitionCount: devicePartitions) + 1)
                    % devicePartitions
            }
            return record
        }
    }

    /// Produces message events; with `pace`, at that many per second in 10 ms slices.
    private func produceMessages(
        _ range: Range<Int>, run: String, producer: KafkaProducer, sent: Sent, pace: Int?, tableUpdates: TableUpdates?
    ) async throws {
        let slice = pace.map { max(1, $0 / 100) } ?? 5_000
        let began = ContinuousClock.now
        var pending: [Task<Void, any Error>] = []
        var enqueued: Task<PendingDeliveries, Never>?
        for (sliceIndex, start) in stride(from: range.lowerBound, to: range.upperBound, by: slice).enumerated() {
            if pace != nil {
                try await Task.sleep(until: began + .milliseconds(10 * sliceIndex), clock: .continuous)
            }
            let numbers = start..<min(range.upperBound, start + slice)
            let now = ContinuousClock.now
            // Event time as a chat backend stamps it: when the message was sent. (One time for every
            // message would leave the event-time merge nothing to order by: each record would wait
            // until every input passed that same instant.)
            let at = EventTime(milliseconds: Int64(Date().timeIntervalSince1970 * 1000)).rfc3339
            var records: [OutgoingRecord] = []
            for number in numbers {
                let conversation = number % Self.conversations
                if let update = tableUpdates?.record(for: number, recipient: 2 * conversation + 1, run: run, at: at) {
                    records.append(update)
                }
                let json =
                    #"{"type":"message.received","id":"e\#(run)-\#(number)","at":"\#(at)","messageId":"m\#(run)-\#(number)","conversationId":"c\#(conversation)","senderId":"u\#(2 * conversation)","kind":"text","text":"benchmark message \#(number)"}"#
                records.append(
                    OutgoingRecord(topic: Topic.messages, key: Array("c\(conversation)".utf8), value: Array(json.utf8)))
            }
            sent.record(numbers.map { "m\(run)-\($0)" }, at: now)
            // Each slice is enqueued once the one before it is, so each conversation's messages reach
            // Kafka in event-time order, as a chat backend writes them, while the next slice is built.
            let before = enqueued
            let enqueuing = Task {
                _ = await before?.value  // Only its order counts here; its deliveries are awaited below.
                return await producer.enqueue(records)
            }
            enqueued = enqueuing
            pending.append(Task { _ = try await enqueuing.value.reports() })
            if pending.count > 32 { try await pending.removeFirst().value }
        }
        for task in pending { try await task.value }
    }
}

/// When each message was sent.
final class Sent: Sendable {
    private let times: Mutex<[String: ContinuousClock.Instant]>

    init(capacity: Int) {
        times = Mutex(Dictionary(minimumCapacity: capacity))
    }

    func record(_ messageIds: [String], at instant: ContinuousClock.Instant) {
        times.withLock { times in for id in messageIds { times[id] = instant } }
    }

    func time(of messageId: String) -> ContinuousClock.Instant? {
        times.withLock { $0[messageId] }
    }

    var ids: [String] { times.withLock { Array($0.keys) } }
}

/// When each message reached each stage: the latency run's latency split into hops, and, when
/// commands stop coming, where the messages without one stopped.
final class HopClock: Sendable {
    private struct Batches {
        /// Whether batches are kept: each kept record holds its memory until the run ends.
        var recording: Bool
        var consumed: [(at: ContinuousClock.Instant, records: [KafkaRecord])] = []
        /// Stage 1's records as the broker acknowledged them (stage 2's are the commands' clock).
        var acknowledged: [(at: ContinuousClock.Instant, records: [OutgoingRecord])] = []
    }

    private let batches: Mutex<Batches>

    /// A clock that keeps batches from now on if `recording`, else from ``startRecording()``.
    init(recording: Bool) {
        batches = Mutex(Batches(recording: recording))
    }

    /// Keeps the batches from now on.
    func startRecording() {
        batches.withLock { $0.recording = true }
    }

    /// Whether batches are kept now.
    var isRecording: Bool { batches.withLock { $0.recording } }

    /// Keeps the batch, while recording, with the time the stage consumed it. Called on the stage's actor, so the
    /// records are only kept here (a retain) and read after the run, in ``report(sent:acknowledged:)``,
    /// or when commands stop coming, in ``whereabouts(of:)``.
    func consumed(_ records: [KafkaRecord]) {
        let now = ContinuousClock.now
        batches.withLock { batches in
            if batches.recording { batches.consumed.append((now, records)) }
        }
    }

    /// Keeps stage 1's fanout records among those a stage made, while recording, with the time the broker
    /// acknowledged them (the commands and changelog records would only hold memory the pipeline
    /// would otherwise give back).
    func acknowledged(_ records: [OutgoingRecord]) {
        guard isRecording else { return }
        let now = ContinuousClock.now
        let fanout = records.filter { $0.topic == Topic.fanout }
        guard !fanout.isEmpty else { return }
        batches.withLock { batches in
            if batches.recording { batches.acknowledged.append((now, fanout)) }
        }
    }

    /// When stage 1 consumed each message, when its first fanout record was acknowledged, and when
    /// stage 2 consumed that record, by message id.
    private func arrivals() -> (
        fanout: [String: ContinuousClock.Instant], written: [String: ContinuousClock.Instant],
        route: [String: ContinuousClock.Instant]
    ) {
        var fanout: [String: ContinuousClock.Instant] = [:]
        var written: [String: ContinuousClock.Instant] = [:]
        var route: [String: ContinuousClock.Instant] = [:]
        let (consumed, acknowledged) = batches.withLock { ($0.consumed, $0.acknowledged) }
        for (at, records) in consumed {
            for record in records {
                guard let id = Self.messageId(in: record.value) else { continue }
                if record.topic == Topic.messages { fanout[id] = fanout[id] ?? at }
                if record.topic == Topic.fanout { route[id] = route[id] ?? at }
            }
        }
        for (at, records) in acknowledged {
            for record in records {
                guard let id = Self.messageId(in: record.value) else { continue }
                written[id] = written[id] ?? at
            }
        }
        return (fanout, written, route)
    }

    /// How many of the messages `ids` each stage read, and in which partitions: where the messages
    /// without a command stopped (unknown while batches are not kept).
    func whereabouts(of ids: [String]) -> String {
        let (recording, consumed) = batches.withLock { ($0.recording, $0.consumed) }
        guard recording else { return "which stage read them is not known (run with --whereabouts)" }
        let wanted = Set(ids)
        var read: [String: [String: Set<Int32>]] = [Topic.messages: [:], Topic.fanout: [:]]
        for (_, records) in consumed {
            for record in records where read[record.topic] != nil {
                guard let id = Self.messageId(in: record.value), wanted.contains(id) else { continue }
                read[record.topic]![id, default: []].insert(record.partition)
            }
        }
        return [("stage 1", Topic.messages), ("stage 2", Topic.fanout)].map { stage, topic in
            let partitions = Set(read[topic]!.values.flatMap { $0 }).sorted()
            return "\(stage) read \(read[topic]!.count) of them (\(topic) partitions \(partitions))"
        }.joined(separator: ", ")
    }

    /// p50 and p99 of each hop: produced → consumed by stage 1 → its fanout record acknowledged →
    /// consumed by stage 2 → command acknowledged; of the messages sent within `sentWithin` if given.
    func report(sent: Sent, acknowledged: CommandClock, sentWithin: Range<ContinuousClock.Instant>? = nil) -> String {
        let (fanoutArrivals, written, routeArrivals) = arrivals()
        let done = acknowledged.times
        var hops: [[Double]] = [[], [], [], []]
        for id in sent.ids {
            guard let start = sent.time(of: id), let fanout = fanoutArrivals[id], let write = written[id],
                let route = routeArrivals[id], let end = done[id], sentWithin?.contains(start) ?? true
            else { continue }
            for (index, (from, to)) in [(start, fanout), (fanout, write), (write, route), (route, end)].enumerated() {
                hops[index].append((to - from).seconds * 1000)
            }
        }
        let names = [
            "produced → stage 1", "stage 1 → fanout acknowledged", "fanout acknowledged → stage 2",
            "stage 2 → command acknowledged",
        ]
        return "pipeline hops (p50 / p99 ms): "
            + zip(names, hops).map { name, values in
                let sorted = values.sorted()
                guard !sorted.isEmpty else { return "\(name) -" }
                return "\(name) \(String(format: "%.1f / %.1f", percentile(sorted, 0.5), percentile(sorted, 0.99)))"
            }.joined(separator: ", ")
    }

    /// The value of the first `"messageId":"…"` member of a record.
    private static func messageId(in value: [UInt8]) -> String? {
        value.withUnsafeBufferPointer { bytes in
            let marker = messageIdMarker
            var start = 0
            while start + marker.count <= bytes.count {
                if bytes[start] == marker[0], memcmp(bytes.baseAddress! + start, marker, marker.count) == 0 {
                    let from = start + marker.count
                    guard let end = bytes[from...].firstIndex(of: UInt8(ascii: "\"")) else { return nil }
                    return String(decoding: bytes[from..<end], as: UTF8.self)
                }
                start += 1
            }
            return nil
        }
    }

    private static let messageIdMarker = Array(#""messageId":""#.utf8)
}

/// When each message's command was acknowledged.
final class CommandClock: Sendable {
    private let acknowledged: Mutex<[String: ContinuousClock.Instant]>

    init(capacity: Int) {
        acknowledged = Mutex(Dictionary(minimumCapacity: capacity))
    }

    func record(_ commands: [NotificationCommand]) {
        let now = ContinuousClock.now
        acknowledged.withLock { seen in
            for command in commands { if let id = command.messageId, seen[id] == nil { seen[id] = now } }
        }
    }

    /// Waits until `count` messages have their commands; fails if a minute passes without one more,
    /// naming some of the messages of `sent` that have none.
    func wait(for count: Int, sent: Sent, diagnose: ([String]) -> String) async throws {
        var seen = 0
        var lastProgress = ContinuousClock.now
        while true {
            let done = acknowledged.withLock { $0.count }
            if done >= count { return }
            if done > seen {
                seen = done
                lastProgress = .now
            } else if ContinuousClock.now - lastProgress > .seconds(60) {
                let acknowledged = times
                let unanswered = sent.ids.filter { acknowledged[$0] == nil }
                let missing = unanswered.sorted().prefix(5)
                throw ValidationError(
                    "no command for a minute: \(done) of \(count) messages have theirs, none for \(missing.joined(separator: ", "))"
                        + (count - done > missing.count ? ", ..." : "") + "; " + diagnose(unanswered)
                        + " (is the pipeline running on this broker, with the topics of Schemas/topics.json? On a broker used before,"
                        + " the embedded broker may have dropped records the pipeline had not read yet.)")
            }
            try await Task.sleep(for: .milliseconds(5))
        }
    }

    /// When each message's first command was acknowledged.
    var times: [String: ContinuousClock.Instant] { acknowledged.withLock { $0 } }

    /// When each message of `sent` was sent and how long until its acknowledgement.
    func latencies(since sent: Sent) -> [(sent: ContinuousClock.Instant, milliseconds: Double)] {
        let acknowledged = times
        return sent.ids.compactMap { id in
            guard let start = sent.time(of: id), let end = acknowledged[id] else { return nil }
            return (start, (end - start).seconds * 1000)
        }
    }

    /// One line per second of sending from `start`: p50 and p99 of the messages sent in it, and
    /// their hops (``HopClock/report(sent:acknowledged:sentWithin:)``).
    func bySecond(since sent: Sent, start: ContinuousClock.Instant, hops: HopClock) -> [String] {
        let seconds = Dictionary(grouping: latencies(since: sent)) { Int(($0.sent - start).seconds) }
        return seconds.keys.sorted().map { second in
            let sorted = seconds[second]!.map(\.milliseconds).sorted()
            let from = start + .seconds(second)
            return "latency run, second \(second): \(sorted.count) messages, p50 "
                + String(format: "%.1f ms, p99 %.1f ms; ", percentile(sorted, 0.5), percentile(sorted, 0.99))
                + hops.report(sent: sent, acknowledged: self, sentWithin: from..<(from + .seconds(1)))
        }
    }
}
