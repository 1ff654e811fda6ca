import CRdkafka
import Foundation
import Logging
import Synchronization

/// Where a consumer without a committed offset starts.
public enum AutoOffsetReset: String, Sendable {
    case earliest
    case latest
}

/// Settings of a consumer.
public struct KafkaConsumerConfiguration: Sendable {
    public var client: KafkaClientConfiguration
    /// The consumer group. Members of one group split the partitions between them.
    public var groupId: String
    public var autoOffsetReset: AutoOffsetReset
    /// At most this many records per batch.
    public var maxBatchSize: Int
    /// How long the group waits for a silent member before it gives its partitions away.
    public var sessionTimeoutMilliseconds: Int
    /// How the group splits partitions between its members.
    public var assignmentStrategy: AssignmentStrategy

    public init(
        client: KafkaClientConfiguration, groupId: String, autoOffsetReset: AutoOffsetReset = .earliest,
        maxBatchSize: Int = 1000, sessionTimeoutMilliseconds: Int = 10_000,
        assignmentStrategy: AssignmentStrategy = .cooperativeSticky
    ) {
        self.client = client
        self.groupId = groupId
        self.autoOffsetReset = autoOffsetReset
        self.maxBatchSize = maxBatchSize
        self.sessionTimeoutMilliseconds = sessionTimeoutMilliseconds
        self.assignmentStrategy = assignmentStrategy
    }
}

/// How a consumer group splits partitions between its members.
public enum AssignmentStrategy: String, Sendable {
    /// Incremental rebalancing: members keep what they have and only moved
    /// partitions stop (librdkafka's `cooperative-sticky`).
    case cooperativeSticky = "cooperative-sticky"
    /// Partition N of every subscribed topic goes to the same member, so
    /// co-partitioned topics are read together (eager rebalancing).
    case range
}

/// What a consumer's owner does when the group moves partitions.
///
/// Both run on the consumer's own thread while it waits, so no record of a
/// newly assigned partition is handed out before `assigned` returns, and
/// revoked partitions are given up only after `revoked` returns: finish and
/// store (or commit) their work there. Stored offsets of revoked partitions
/// are committed before they are given up. A closed consumer lets go of its
/// hooks, so what they hold may hold the consumer without a reference cycle.
public struct RebalanceHooks: Sendable {
    public var assigned: @Sendable ([TopicPartition]) async -> Void
    public var revoked: @Sendable ([TopicPartition]) async -> Void

    public init(
        assigned: @escaping @Sendable ([TopicPartition]) async -> Void = { _ in },
        revoked: @escaping @Sendable ([TopicPartition]) async -> Void = { _ in }
    ) {
        self.assigned = assigned
        self.revoked = revoked
    }
}

/// A Kafka consumer: a consumer-group member (cooperative-sticky) or a
/// reader of manually assigned partitions.
///
/// A thread of its own polls librdkafka and hands records over in batches
/// (``batches``), so reading costs one `await` per batch. Only offsets the
/// owner ``store(_:)``s or ``commit(_:)``s are ever committed.
public final class KafkaConsumer: Sendable {
    private let handle: ConsumerHandle
    private let context: ConsumerContext
    private let pollThread: ServiceThread
    private let blockingCalls = BlockingCallQueue(label: "notify.kafka.consumer")

    public init(configuration: KafkaConsumerConfiguration, hooks: RebalanceHooks = .init(), logger: Logger) throws {
        let handoff = RecordBatchHandoff()
        context = ConsumerContext(
            logger: logger, hooks: hooks, handoff: handoff, autoOffsetReset: configuration.autoOffsetReset)
        let native = try NativeConfiguration(
            configuration.client.merged(
                with: [
                    "group.id": configuration.groupId,
                    "auto.offset.reset": configuration.autoOffsetReset.rawValue,
                    "partition.assignment.strategy": configuration.assignmentStrategy.rawValue,
                    "enable.auto.commit": "true",
                    "enable.auto.offset.store": "false",
                    "session.timeout.ms": String(configuration.sessionTimeoutMilliseconds),
                    "heartbeat.interval.ms": String(max(100, configuration.sessionTimeoutMilliseconds / 5)),
                ], for: .consumer))
        try native.install(context)
        try native.installStatistics(configuration.client.statistics, into: context)
        rd_kafka_conf_set_rebalance_cb(native.pointer, rebalanceCallback)
        handle = ConsumerHandle(
            NativeHandle(pointer: try makeNativeClient(type: RD_KAFKA_CONSUMER, configuration: native)))
        rd_kafka_poll_set_consumer(handle.ownerPointer)
        let loop = PollLoop(handle: handle, context: context, maxBatchSize: configuration.maxBatchSize)
        pollThread = ServiceThread(name: "notify.kafka.consumer.poll") { loop.iterate() }
    }

    /// Joins the group and consumes `topics`.
    public func subscribe(_ topics: [String]) throws {
        let list = NativePartitionList(
            partitions: topics.map {
                TopicPartition(topic: $0, partition: NativeConstants.unassignedPartition)
            })
        let result = try handle.use { client in list.withUnsafeMutablePointer { rd_kafka_subscribe(client, $0) } }
        if result != RD_KAFKA_RESP_ERR_NO_ERROR { throw KafkaError(result, context: "subscribe to \(topics)") }
    }

    /// Reads exactly these partitions from these positions, outside any group rebalancing. A
    /// partition given an exact offset has its ``lag()`` known from its first fetch on, also
    /// when it brings no record.
    public func assign(_ partitions: [TopicPartition: KafkaOffset]) throws {
        let list = NativePartitionList(offsets: partitions.map { ($0.key, $0.value.native) })
        let result = try handle.use { client in list.withUnsafeMutablePointer { rd_kafka_assign(client, $0) } }
        if result != RD_KAFKA_RESP_ERR_NO_ERROR { throw KafkaError(result, context: "assign") }
        context.assigned.withLock { $0 = Set(partitions.keys) }
        context.startOffsets.withLock { starts in
            for (partition, offset) in partitions {
                if case .offset(let start) = offset { starts[partition] = FetchStart(offset: start, high: nil) }
            }
        }
    }

    /// The partitions this consumer reads now, as its assignments and revocations left them. Does not
    /// ask librdkafka, whose `rd_kafka_assignment` waits for a reply from the client's main thread.
    public func assignment() throws -> Set<TopicPartition> {
        try handle.use { _ in context.assigned.withLock { $0 } }
    }

    /// The records, a batch at a time. Read by one task.
    public var batches: KafkaRecordBatches { KafkaRecordBatches(handoff: context.handoff) }

    /// The records one by one.
    public var records: KafkaRecords { KafkaRecords(batches: batches) }

    /// Marks work as done: `offset` is the next offset to read in each partition
    /// (last processed + 1). Stored offsets are committed in the background
    /// (`auto.commit.interval.ms`), before partitions are revoked, and on close.
    public func store(_ offsets: [TopicPartition: Int64]) throws {
        let list = NativePartitionList(offsets: offsets.map { ($0.key, $0.value) })
        let result = try handle.use { client in list.withUnsafeMutablePointer { rd_kafka_offsets_store(client, $0) } }
        let failures = list.entries.filter { $0.error != RD_KAFKA_RESP_ERR_NO_ERROR }
        if result != RD_KAFKA_RESP_ERR_NO_ERROR || !failures.isEmpty {
            let code = failures.first?.error ?? result
            let partitions = failures.map(\.partition.description).joined(separator: ", ")
            throw KafkaError(code, context: "store offsets for \(partitions)")
        }
    }

    /// Commits `offsets` (next offset to read) and returns once the group coordinator has them.
    public func commit(_ offsets: [TopicPartition: Int64]) async throws {
        let handle = handle
        let entries = offsets.map { ($0.key, Optional($0.value)) }
        let result = try await blockingCalls.run {
            let list = NativePartitionList(offsets: entries)
            return try handle.use { client in list.withUnsafeMutablePointer { rd_kafka_commit(client, $0, 0) } }
        }
        if result != RD_KAFKA_RESP_ERR_NO_ERROR { throw KafkaError(result, context: "commit") }
    }

    /// The committed offsets of the group for `partitions` (nil: none committed).
    public func committed(_ partitions: [TopicPartition], timeoutMilliseconds: Int32 = 10_000) async throws
        -> [TopicPartition: Int64?]
    {
        let handle = handle
        return try await blockingCalls.run {
            let list = NativePartitionList(partitions: partitions)
            let result = try handle.use { client in
                list.withUnsafeMutablePointer { rd_kafka_committed(client, $0, timeoutMilliseconds) }
            }
            if result != RD_KAFKA_RESP_ERR_NO_ERROR { throw KafkaError(result, context: "committed offsets") }
            var offsets: [TopicPartition: Int64?] = [:]
            for entry in list.entries { offsets[entry.partition] = entry.offset >= 0 ? entry.offset : nil }
            return offsets
        }
    }

    /// How far behind each assigned partition this consumer is: the high watermark last seen by the
    /// fetcher (or, if later, the one the broker gave when a rebalance assigned the partition) minus
    /// the position of the next record to fetch (before the first, where the fetcher starts), plus
    /// the records fetched and not yet handed to ``forEachBatch(_:)`` or ``batches``. A partition
    /// whose figure is not known yet (before its first fetch) has no entry. Does not ask the broker.
    ///
    /// librdkafka keeps a partition's high watermark from its last fetch for as long as the client
    /// lives, also while the partition is assigned elsewhere: a partition a rebalance gives back
    /// would otherwise show the end it had when this consumer last read it, before the records its
    /// other owner read and committed, and look read to its end with records waiting. Partitions
    /// given by ``assign(_:)`` have no such figure: assign a partition this consumer read before
    /// only from a consumer made anew.
    public func lag() throws -> [TopicPartition: Int64] {
        let buffered = context.handoff.bufferedCounts()
        let starts = context.startOffsets.withLock { $0 }
        // The assignment as the rebalance callback left it, not `rd_kafka_assignment`'s: that waits for
        // the client's main thread, and this is called for every batch.
        let assigned = Array(context.assigned.withLock { $0 })
        guard !assigned.isEmpty else { return try handle.use { _ in [:] } }
        let list = NativePartitionList(partitions: assigned)
        return try handle.use { pointer in
            try list.withUnsafeMutablePointer { list in
                let result = rd_kafka_position(pointer, list)
                if result != RD_KAFKA_RESP_ERR_NO_ERROR { throw KafkaError(result, context: "position") }
                var lags: [TopicPartition: Int64] = Dictionary(minimumCapacity: assigned.count)
                // The list's entries are `assigned`'s, in its order: no topic name read back out of C.
                for (index, partition) in assigned.enumerated() {
                    let element = list.pointee.elems[index]
                    var low: Int64 = -1
                    var high: Int64 = -1
                    if rd_kafka_get_watermark_offsets(pointer, element.topic, element.partition, &low, &high)
                        != RD_KAFKA_RESP_ERR_NO_ERROR
                    {
                        (low, high) = (-1, -1)
                    }
                    let start = starts[partition]
                    high = max(high, start?.high ?? -1)
                    guard high >= 0 else { continue }
                    var from = element.offset
                    if from < 0 {
                        // Nothing handed out yet: the fetcher starts at the committed offset, else as reset says.
                        guard let start else { continue }
                        from = start.offset ?? (context.autoOffsetReset == .earliest ? max(low, 0) : high)
                    }
                    lags[partition] = max(0, high - from) + (buffered[partition] ?? 0)
                }
                return lags
            }
        }
    }

    /// Stops fetching `partitions` until ``resume(_:)``; records already handed out stay valid.
    public func pause(_ partitions: [TopicPartition]) throws {
        try changeFetching(partitions, rd_kafka_pause_partitions, "pause")
    }

    /// Fetches `partitions` again after ``pause(_:)``.
    public func resume(_ partitions: [TopicPartition]) throws {
        try changeFetching(partitions, rd_kafka_resume_partitions, "resume")
    }

    private func changeFetching(
        _ partitions: [TopicPartition],
        _ call: (OpaquePointer?, UnsafeMutablePointer<rd_kafka_topic_partition_list_t>?) -> rd_kafka_resp_err_t,
        _ name: String
    ) throws {
        let list = NativePartitionList(partitions: partitions)
        let result = try handle.use { client in list.withUnsafeMutablePointer { call(client, $0) } }
        if result != RD_KAFKA_RESP_ERR_NO_ERROR { throw KafkaError(result, context: name) }
    }

    /// Moves the read position of an assigned partition.
    public func seek(_ partition: TopicPartition, to offset: KafkaOffset) async throws {
        let handle = handle
        try await blockingCalls.run {
            let list = NativePartitionList(offsets: [(partition, offset.native)])
            let error = try handle.use { client in
                list.withUnsafeMutablePointer { rd_kafka_seek_partitions(client, $0, 10_000) }
            }
            if let error {
                throw KafkaError(consuming: error, context: "seek \(partition)")
            }
            if let entry = list.entries.first, entry.error != RD_KAFKA_RESP_ERR_NO_ERROR {
                throw KafkaError(entry.error, context: "seek \(partition)")
            }
        }
    }

    /// Hands each batch to `body` until the batches end, `body` throws or the task is
    /// cancelled, then closes the consumer before it returns or rethrows, so nothing of
    /// the client outlives the call. Cancellation starts the close at once.
    public func forEachBatch(_ body: ([KafkaRecord]) async throws -> Void) async throws {
        do {
            try await withTaskCancellationHandler {
                for try await batch in batches { try await body(batch) }
            } onCancel: {
                beginClosing()
            }
        } catch {
            await close()
            throw error
        }
        await close()
    }

    /// Leaves the group at once (the `revoked` hook runs and stored offsets
    /// are committed), ends ``batches`` and releases the client. Further calls
    /// of `close` wait for the first to finish; any other call made while or
    /// after it closes throws.
    public func close() async {
        beginClosing()
        await pollThread.join()
    }

    /// Tells the poll thread to close the client and ends ``batches`` after what is buffered.
    private func beginClosing() {
        handle.requestClose(failure: nil, endingBatchesOf: context.handoff)
    }
}

/// The consumer's `rd_kafka_t *` and its lifecycle (a ``ConsumerStateMachine`` in one `Mutex`).
/// Its poll thread uses it freely, closes it when asked to and releases it; every other call goes
/// through ``use(_:)``, so a call made once the client is closed gets an error instead of a
/// released handle, and the release waits for calls under way.
final class ConsumerHandle: Sendable {
    private let native: NativeHandle
    private let lifecycle = Mutex(ConsumerStateMachine())
    /// Signalled by the last call under way once the client is closed; the poll thread waits on it.
    private let callsEnded = DispatchSemaphore(value: 0)

    init(_ native: NativeHandle) {
        self.native = native
    }

    /// For the poll thread only, which is the one to release it.
    var ownerPointer: OpaquePointer { native.pointer }

    /// Runs `call` with the handle unless the client is closed.
    func use<T>(_ call: (OpaquePointer) throws -> T) throws -> T {
        switch lifecycle.withLock({ $0.startCall() }) {
        case .call: break
        case .refuse: throw KafkaError.client("the consumer is closed")
        }
        defer {
            switch lifecycle.withLock({ $0.finishCall() }) {
            case .none: break
            case .resumeRelease: callsEnded.signal()
            }
        }
        return try call(native.pointer)
    }

    /// Asks the poll thread to close the client and ends the batches of `handoff` if this is the
    /// first request (with `failure`, a fatal error of the poll thread, always).
    func requestClose(failure: KafkaError?, endingBatchesOf handoff: RecordBatchHandoff) {
        switch lifecycle.withLock({ $0.requestClose(failure: failure) }) {
        case .none: break
        case .endBatches(let failure): handoff.finish(throwing: failure)
        }
    }

    /// What the poll thread does at its next turn.
    var nextPollAction: ConsumerStateMachine.PollAction { lifecycle.withLock { $0.nextPollAction() } }

    /// Refuses further calls, waits for those under way, and releases the client. On the poll
    /// thread, once, after `rd_kafka_consumer_close`.
    func release() {
        switch lifecycle.withLock({ $0.clientClosed() }) {
        case .release: break
        case .waitForCalls: callsEnded.wait()
        }
        rd_kafka_destroy(native.pointer)
    }
}

/// What the rebalance callback needs.
final class ConsumerContext: ClientContext, @unchecked Sendable {
    /// Released once the client is: what the hooks hold (often the consumer's owner, which
    /// holds the consumer) is not kept alive by a closed consumer.
    private let hooksUntilClosed: Mutex<RebalanceHooks?>
    let handoff: RecordBatchHandoff
    /// Partitions revoked while the poll thread was inside a poll call: their
    /// records still in the batch being built are dropped.
    let revokedDuringPoll = Mutex<Set<TopicPartition>>([])
    /// Where the fetcher starts each assigned partition, read at assignment, for ``KafkaConsumer/lag()``.
    let startOffsets = Mutex<[TopicPartition: FetchStart]>([:])
    /// The partitions assigned, as ``KafkaConsumer/assign(_:)`` and the rebalance callback set them.
    let assigned = Mutex<Set<TopicPartition>>([])
    let autoOffsetReset: AutoOffsetReset

    init(logger: Logger, hooks: RebalanceHooks, handoff: RecordBatchHandoff, autoOffsetReset: AutoOffsetReset) {
        hooksUntilClosed = Mutex(hooks)
        self.handoff = handoff
        self.autoOffsetReset = autoOffsetReset
        super.init(logger: logger)
    }

    /// The hooks, until ``releaseHooks()``: rebalances only happen before that.
    var hooks: RebalanceHooks { hooksUntilClosed.withLock { $0 } ?? RebalanceHooks() }

    func releaseHooks() {
        hooksUntilClosed.withLock { $0 = nil }
    }
}

/// The body of the consumer's poll thread.
private struct PollLoop: Sendable {
    let handle: ConsumerHandle
    let context: ConsumerContext
    let maxBatchSize: Int

    /// Polls one batch and hands it over; once asked to close, closes and releases the consumer.
    /// Returns whether to go on.
    func iterate() -> Bool {
        switch handle.nextPollAction {
        case .poll: break
        case .close:
            let result = rd_kafka_consumer_close(handle.ownerPointer)
            if result != RD_KAFKA_RESP_ERR_NO_ERROR {
                context.logger.warning("Consumer close: \(KafkaError(result))")
            }
            handle.release()
            context.releaseHooks()
            return false
        }
        var batch: [KafkaRecord] = []
        batch.reserveCapacity(min(maxBatchSize, 1024))
        var topicNames: [OpaquePointer: String] = [:]
        var lastTopic: (rkt: OpaquePointer, name: String)?
        var timeout: Int32 = 100
        while batch.count < maxBatchSize, let message = rd_kafka_consumer_poll(handle.ownerPointer, timeout) {
            defer { rd_kafka_message_destroy(message) }
            timeout = 0
            let native = message.pointee
            if native.err == RD_KAFKA_RESP_ERR_NO_ERROR {
                let rkt = native.rkt!
                if lastTopic?.rkt != rkt {
                    let name = topicNames[rkt] ?? String(cString: rd_kafka_topic_name(rkt))
                    topicNames[rkt] = name
                    lastTopic = (rkt, name)
                }
                batch.append(KafkaRecord(copying: message, topic: lastTopic!.name))
            } else if native.err != RD_KAFKA_RESP_ERR__PARTITION_EOF {
                let error = KafkaError(native.err, context: "consume")
                if native.err == RD_KAFKA_RESP_ERR__FATAL {
                    context.logger.critical("\(error)")
                    handle.requestClose(failure: error, endingBatchesOf: context.handoff)
                    return true
                }
                context.logger.warning("\(error)")
            }
        }
        let revoked = context.revokedDuringPoll.withLock { revoked in
            defer { revoked = [] }
            return revoked
        }
        if !revoked.isEmpty { batch.removeAll { revoked.contains($0.topicPartition) } }
        if !batch.isEmpty { context.handoff.push(batch) }
        return true
    }
}

/// Where the fetcher starts an assigned partition, and how far the partition went then.
struct FetchStart: Sendable {
    /// The committed offset, `nil` when none (then `autoOffsetReset` says).
    var offset: Int64?
    /// The high watermark the broker gave when a rebalance assigned the partition; `nil` for a
    /// partition given by ``KafkaConsumer/assign(_:)``.
    var high: Int64?
}

/// Reads the committed offsets and the high watermarks of newly assigned partitions (on the poll
/// thread, which may block), where the fetcher starts them and how far they went: the watermark
/// librdkafka keeps from this consumer's last fetch of a partition may be from long before.
private func noteStartOffsets(
    _ handle: OpaquePointer, _ partitions: UnsafeMutablePointer<rd_kafka_topic_partition_list_t>,
    _ context: ConsumerContext
) {
    guard let copy = NativePartitionList(copying: partitions) else { return }
    let result = copy.withUnsafeMutablePointer { rd_kafka_committed(handle, $0, 10_000) }
    guard result == RD_KAFKA_RESP_ERR_NO_ERROR else {
        context.logger.warning(
            "Committed offsets of assigned partitions not read: \(KafkaError(result)); their lag is unknown until their first record"
        )
        return
    }
    // The ends in one request per broker: a time of -1 asks for the latest offset.
    let entries = copy.entries
    let ends = NativePartitionList(offsets: entries.map { ($0.partition, Int64(-1)) })
    let endsResult = ends.withUnsafeMutablePointer { rd_kafka_offsets_for_times(handle, $0, 10_000) }
    var highs: [TopicPartition: Int64] = [:]
    if endsResult == RD_KAFKA_RESP_ERR_NO_ERROR {
        for end in ends.entries where end.error == RD_KAFKA_RESP_ERR_NO_ERROR && end.offset >= 0 {
            highs[end.partition] = end.offset
        }
    }
    let unknown = entries.map(\.partition).filter { highs[$0] == nil }
    if !unknown.isEmpty {
        context.logger.warning(
            "High watermarks of \(unknown.map(\.description).joined(separator: ", ")) not read: \(KafkaError(endsResult)); their lag is unknown until their first record"
        )
    }
    context.startOffsets.withLock { starts in
        for entry in entries {
            guard let high = highs[entry.partition] else { continue }
            starts[entry.partition] = FetchStart(offset: entry.offset >= 0 ? entry.offset : nil, high: high)
        }
    }
    // Where each partition resumes, against its end: after a rebalance, how much its last owner left.
    let resumes = entries.map { entry in
        let end = highs[entry.partition].map(String.init) ?? "unknown"
        return entry.offset >= 0
            ? "\(entry.partition) at \(entry.offset) of \(end)"
            : "\(entry.partition) at auto.offset.reset (no commit) of \(end)"
    }
    context.logger.info("Assigned partitions resume: \(resumes.joined(separator: ", "))")
}

private let rebalanceCallback:
    @convention(c) (
        OpaquePointer?, rd_kafka_resp_err_t, UnsafeMutablePointer<rd_kafka_topic_partition_list_t>?,
        UnsafeMutableRawPointer?
    ) -> Void = { handle, reason, partitions, opaque in
        guard let handle, let partitions, let opaque else { return }
        let context = Unmanaged<ConsumerContext>.fromOpaque(opaque).takeUnretainedValue()
        let cooperative = String(cString: rd_kafka_rebalance_protocol(handle)) == "COOPERATIVE"
        let topicPartitions = NativePartitionList.entries(ofBorrowed: partitions).map(\.partition)
        switch reason {
        case RD_KAFKA_RESP_ERR__ASSIGN_PARTITIONS:
            context.logger.info("Partitions assigned: \(topicPartitions.map(\.description).joined(separator: ", "))")
            if cooperative {
                if let error = rd_kafka_incremental_assign(handle, partitions) {
                    context.logger.error("\(KafkaError(consuming: error, context: "incremental assign"))")
                } else {
                    context.assigned.withLock { $0.formUnion(topicPartitions) }
                }
            } else {
                rd_kafka_assign(handle, partitions)
                context.assigned.withLock { $0 = Set(topicPartitions) }
            }
            noteStartOffsets(handle, partitions, context)
            let hooks = context.hooks
            runBlocking { await hooks.assigned(topicPartitions) }
        case RD_KAFKA_RESP_ERR__REVOKE_PARTITIONS:
            context.logger.info("Partitions revoked: \(topicPartitions.map(\.description).joined(separator: ", "))")
            let revoked = Set(topicPartitions)
            context.startOffsets.withLock { starts in for partition in revoked { starts[partition] = nil } }
            context.handoff.purge(revoked)
            context.revokedDuringPoll.withLock { $0.formUnion(revoked) }
            let hooks = context.hooks
            runBlocking { await hooks.revoked(topicPartitions) }
            if rd_kafka_assignment_lost(handle) == 0 {
                // Commits the stored offsets (these partitions' among them) before they are given up.
                let result = rd_kafka_commit(handle, nil, 0)
                if result != RD_KAFKA_RESP_ERR_NO_ERROR && result != RD_KAFKA_RESP_ERR__NO_OFFSET {
                    context.logger.warning("Commit on revoke: \(KafkaError(result))")
                }
            }
            if cooperative {
                if let error = rd_kafka_incremental_unassign(handle, partitions) {
                    context.logger.error("\(KafkaError(consuming: error, context: "incremental unassign"))")
                }
                context.assigned.withLock { $0.subtract(revoked) }
            } else {
                rd_kafka_assign(handle, nil)
                context.assigned.withLock { $0 = [] }
            }
        default:
            context.logger.error("Rebalance failed: \(KafkaError(reason))")
            rd_kafka_assign(handle, nil)
            context.assigned.withLock { $0 = [] }
        }
    }
