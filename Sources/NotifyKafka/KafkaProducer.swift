import CRdkafka
import Foundation
import Logging
import Synchronization

/// Settings of a producer beyond those every client has.
public struct KafkaProducerSettings: Sendable {
    /// Exactly-once delivery per partition within a producer session (`enable.idempotence`).
    public var idempotence: Bool
    /// How many records may await their delivery report at once; sending more waits.
    public var inFlightLimit: Int
    /// How long librdkafka waits to fill a batch (`linger.ms`).
    public var lingerMilliseconds: Int

    public init(idempotence: Bool = true, inFlightLimit: Int = 50_000, lingerMilliseconds: Int = 5) {
        self.idempotence = idempotence
        self.inFlightLimit = inFlightLimit
        self.lingerMilliseconds = lingerMilliseconds
    }
}

/// Produces records and reports where the broker stored each of them.
///
/// Sending never blocks a thread: records are enqueued with
/// `rd_kafka_produceva` (no thread-local error state), and delivery reports
/// are served by a thread of the producer's own that resumes the senders.
public final class KafkaProducer: Sendable {
    private let handle: NativeHandle
    private let context: ProducerContext
    private let topicHandles = Mutex<[String: NativeTopicHandle]>([:])
    private let pollThread: ServiceThread
    private let stopping = StopFlag()
    private let blockingCalls = BlockingCallQueue(label: "notify.kafka.producer")

    public init(
        configuration: KafkaClientConfiguration, settings: KafkaProducerSettings = .init(), logger: Logger
    ) throws {
        context = ProducerContext(logger: logger, window: InFlightWindow(capacity: settings.inFlightLimit))
        let native = try NativeConfiguration(
            configuration.merged(
                with: [
                    "enable.idempotence": settings.idempotence ? "true" : "false",
                    "linger.ms": String(settings.lingerMilliseconds),
                    // The Java client's partitioner, so records keyed alike land in the same partition
                    // whichever client produced them (co-partitioning with topics the chat backend writes).
                    "partitioner": "murmur2_random",
                    "queue.buffering.max.messages": String(max(100_000, settings.inFlightLimit * 2)),
                ], for: .producer))
        try native.install(context)
        try native.installStatistics(configuration.statistics, into: context)
        rd_kafka_conf_set_dr_msg_cb(native.pointer, deliveryReportCallback)
        handle = NativeHandle(pointer: try makeNativeClient(type: RD_KAFKA_PRODUCER, configuration: native))
        let handle = handle
        let stopping = stopping
        pollThread = ServiceThread(name: "notify.kafka.producer.poll") {
            rd_kafka_poll(handle.pointer, 100)
            return !stopping.isRaised
        }
    }

    /// Sends one record and returns once the broker acknowledged it.
    public func send(_ record: OutgoingRecord) async throws -> DeliveryReport {
        try await send([record])[0]
    }

    /// Sends many records with a bounded number in flight and returns their
    /// delivery reports, in the order of `records`, once all are acknowledged.
    /// Throws the first delivery error if any record failed.
    public func send(_ records: [OutgoingRecord]) async throws -> [DeliveryReport] {
        try await enqueue(records).reports()
    }

    /// Hands `records` to librdkafka in their order (waiting while the in-flight window is full)
    /// and returns once all are enqueued, before they are acknowledged: records of a later call
    /// are enqueued after these, so calls made one after the other keep their order per
    /// partition while their acknowledgements overlap.
    public func enqueue(_ records: [OutgoingRecord]) async -> PendingDeliveries {
        let batch = DeliveryBatch(records)
        var index = 0
        var topic: (name: String, handle: OpaquePointer)?
        enqueuing: while index < records.count {
            // As many places of the window as are free (at least one), then that many records without a suspension.
            let places = await context.window.acquire(upTo: records.count - index)
            for used in 0..<places {
                if topic?.name != records[index].topic {
                    topic = (records[index].topic, topicHandle(records[index].topic))
                }
                // Tried at once with the record borrowed from the array, not copied; only a full
                // queue (or an error) takes the slower path.
                let code = records.withUnsafeBufferPointer {
                    produce($0.baseAddress! + index, topic: topic!.handle, opaque: batch.opaque(index))
                }
                do {
                    if code != RD_KAFKA_RESP_ERR_NO_ERROR {
                        try await enqueue(
                            records[index], after: code, topic: topic!.handle, opaque: batch.opaque(index))
                    }
                } catch {
                    for _ in used..<places { context.window.release() }
                    batch.abandon(from: index, error: error as? KafkaError ?? .client("\(error)"))
                    break enqueuing
                }
                index += 1
            }
        }
        return PendingDeliveries(batch: batch)
    }

    /// Waits until every enqueued record has its delivery report.
    public func flush(timeoutMilliseconds: Int32 = 60_000) async throws {
        let handle = handle
        let result = await blockingCalls.run { rd_kafka_flush(handle.pointer, timeoutMilliseconds) }
        if result != RD_KAFKA_RESP_ERR_NO_ERROR { throw KafkaError(result, context: "flush") }
    }

    /// Flushes what is in flight, then releases the client. Call once, last.
    public func close() async {
        do { try await flush() } catch { context.logger.warning("Producer closed with records undelivered: \(error)") }
        stopping.raise()
        await pollThread.join()
        let handles = topicHandles.withLock { handles in
            defer { handles = [:] }
            return Array(handles.values)
        }
        for topic in handles { rd_kafka_topic_destroy(topic.pointer) }
        rd_kafka_destroy(handle.pointer)
    }

    private func topicHandle(_ name: String) -> OpaquePointer {
        topicHandles.withLock { handles in
            if let existing = handles[name] { return existing.pointer }
            let created = rd_kafka_topic_new(handle.pointer, name, nil)!
            handles[name] = NativeTopicHandle(pointer: created)
            return created
        }
    }

    /// Enqueues `record`, whose first try gave `code`, retrying while librdkafka's own queue is full.
    private func enqueue(
        _ record: OutgoingRecord, after code: rd_kafka_resp_err_t, topic: OpaquePointer,
        opaque: UnsafeMutableRawPointer
    ) async throws {
        var code = code
        while code != RD_KAFKA_RESP_ERR_NO_ERROR {
            guard code == RD_KAFKA_RESP_ERR__QUEUE_FULL else {
                throw KafkaError(code, context: "produce to \(record.topic)")
            }
            try await Task.sleep(for: .milliseconds(1))
            code = withUnsafePointer(to: record) { produce($0, topic: topic, opaque: opaque) }
        }
    }

    /// Hands one record to librdkafka, which copies it. The record is read in place through `record`:
    /// captured by the closures that lay out the call's arguments, a record passed by value is copied
    /// first, every one of its arrays retained and released.
    private func produce(
        _ record: UnsafePointer<OutgoingRecord>, topic: OpaquePointer, opaque: UnsafeMutableRawPointer
    ) -> rd_kafka_resp_err_t {
        record.pointee.headers.withUnsafeBufferPointer { headerList in
            withHeaderArguments(headerList) { headers in
                // The arguments of one rd_kafka_produceva call, on the stack: at most 7 fixed ones and the headers.
                withUnsafeTemporaryAllocation(of: rd_kafka_vu_t.self, capacity: 7 + headers.count) { values in
                    var count = 0
                    func add(_ type: rd_kafka_vtype_t, _ fill: (inout rd_kafka_vu_t) -> Void) {
                        var value = rd_kafka_vu_t()
                        value.vtype = type
                        fill(&value)
                        values[count] = value
                        count += 1
                    }
                    add(RD_KAFKA_VTYPE_RKT) { $0.u.rkt = topic }
                    add(RD_KAFKA_VTYPE_MSGFLAGS) { $0.u.i = NativeConstants.messageCopyFlag }
                    add(RD_KAFKA_VTYPE_OPAQUE) { $0.u.ptr = opaque }
                    add(RD_KAFKA_VTYPE_PARTITION) {
                        $0.u.i32 = record.pointee.partition ?? NativeConstants.unassignedPartition
                    }
                    add(RD_KAFKA_VTYPE_TIMESTAMP) { $0.u.i64 = record.pointee.timestampMilliseconds ?? 0 }
                    for header in headers {
                        add(RD_KAFKA_VTYPE_HEADER) { $0.u.header = header }
                    }
                    return record.pointee.value.withUnsafeBytes { value in
                        withOptionalBytes(record.pointee.key) { key in
                            add(RD_KAFKA_VTYPE_VALUE) {
                                $0.u.mem.ptr = UnsafeMutableRawPointer(mutating: value.baseAddress)
                                $0.u.mem.size = value.count
                            }
                            if let key {
                                add(RD_KAFKA_VTYPE_KEY) {
                                    $0.u.mem.ptr = UnsafeMutableRawPointer(mutating: key.baseAddress)
                                    $0.u.mem.size = key.count
                                }
                            }
                            guard let error = rd_kafka_produceva(handle.pointer, values.baseAddress, count) else {
                                return RD_KAFKA_RESP_ERR_NO_ERROR
                            }
                            let code = rd_kafka_error_code(error)
                            rd_kafka_error_destroy(error)
                            return code
                        }
                    }
                }
            }
        }
    }
}

private func withOptionalBytes<R>(_ bytes: [UInt8]?, _ body: (UnsafeRawBufferPointer?) -> R) -> R {
    guard let bytes else { return body(nil) }
    return bytes.withUnsafeBytes { body($0) }
}

/// One header argument of `rd_kafka_produceva`.
private typealias HeaderArgument = rd_kafka_vu_t.__Unnamed_union_u.__Unnamed_struct_header

/// Gives `body` the headers as librdkafka takes them (it copies them): each name a C string and each
/// value (a null value: a nil pointer and size -1) in one buffer on the stack, so that a record's
/// headers cost no allocation.
private func withHeaderArguments<R>(
    _ headers: UnsafeBufferPointer<KafkaHeader>, _ body: (UnsafeBufferPointer<HeaderArgument>) -> R
) -> R {
    let bytes = headers.reduce(0) { $0 + $1.name.utf8.count + 1 + ($1.value?.count ?? 0) }
    return withUnsafeTemporaryAllocation(of: UInt8.self, capacity: max(bytes, 1)) { storage in
        withUnsafeTemporaryAllocation(of: HeaderArgument.self, capacity: headers.count) { arguments in
            var cursor = 0
            for index in headers.indices {
                let name = storage.baseAddress! + cursor
                for byte in headers[index].name.utf8 {
                    storage[cursor] = byte
                    cursor += 1
                }
                storage[cursor] = 0
                cursor += 1
                var argument = HeaderArgument()
                argument.name = UnsafeRawPointer(name).assumingMemoryBound(to: CChar.self)
                if let value = headers[index].value {
                    // A non-nil pointer even for an empty value, so it is not taken for null.
                    let start = storage.baseAddress! + cursor
                    value.withUnsafeBytes { bytes in
                        guard let base = bytes.baseAddress else { return }
                        UnsafeMutableRawPointer(start).copyMemory(from: base, byteCount: bytes.count)
                    }
                    cursor += value.count
                    argument.val = UnsafeRawPointer(start)
                    argument.size = value.count
                } else {
                    argument.val = nil
                    argument.size = -1
                }
                arguments.initializeElement(at: index, to: argument)
            }
            return body(UnsafeBufferPointer(arguments))
        }
    }
}

/// What the delivery-report callback needs.
final class ProducerContext: ClientContext, @unchecked Sendable {
    let window: InFlightWindow

    init(logger: Logger, window: InFlightWindow) {
        self.window = window
        super.init(logger: logger)
    }
}

/// Records handed to librdkafka by ``KafkaProducer/enqueue(_:)`` whose acknowledgements are awaited.
public struct PendingDeliveries: Sendable {
    fileprivate let batch: DeliveryBatch

    /// The delivery reports, in the order of the records, once all are acknowledged.
    /// Throws the first delivery error if any record failed (or could not be enqueued).
    public func reports() async throws -> [DeliveryReport] {
        try await batch.reports()
    }
}

/// Collects the delivery reports of one `enqueue` call.
///
/// librdkafka hands each record's opaque pointer back in its delivery report; for record `i`
/// it points at slot `i` of one allocation per batch, which names the batch and the index,
/// so a record costs no allocation of its own. The batch keeps itself alive until its last
/// report has come, whether or not anyone awaits the reports.
final class DeliveryBatch: @unchecked Sendable {
    struct Slot {
        let batch: Unmanaged<DeliveryBatch>
        let index: Int
    }

    fileprivate struct State {
        var reports: [DeliveryReport?]
        var remaining: Int
        var error: KafkaError?
        var waiter: CheckedContinuation<[DeliveryReport], any Error>?
    }

    private let state: Mutex<State>
    private let records: [OutgoingRecord]
    /// Written once in `init`, read-only afterwards.
    private let slots: UnsafeMutablePointer<Slot>

    init(_ records: [OutgoingRecord]) {
        self.records = records
        state = Mutex(State(reports: Array(repeating: nil, count: records.count), remaining: records.count))
        slots = .allocate(capacity: records.count)
        let unmanaged = Unmanaged.passUnretained(self)
        for index in records.indices { (slots + index).initialize(to: Slot(batch: unmanaged, index: index)) }
        // Released by the last report.
        if !records.isEmpty { _ = unmanaged.retain() }
    }

    deinit {
        slots.deinitialize(count: records.count)
        slots.deallocate()
    }

    /// The opaque pointer of record `index`.
    func opaque(_ index: Int) -> UnsafeMutableRawPointer {
        UnsafeMutableRawPointer(slots + index)
    }

    /// The report of record `index`, which the broker stored at `partition` and `offset`.
    func delivered(_ index: Int, partition: Int32, offset: Int64) {
        complete(
            index, with: .success(DeliveryReport(topic: records[index].topic, partition: partition, offset: offset)))
    }

    func complete(_ index: Int, with result: Result<DeliveryReport, KafkaError>) {
        let finished = state.withLock {
            state -> (CheckedContinuation<[DeliveryReport], any Error>, Result<[DeliveryReport], any Error>)? in
            switch result {
            case .success(let report): state.reports[index] = report
            case .failure(let error): state.error = state.error ?? error
            }
            state.remaining -= 1
            guard state.remaining == 0 else { return nil }
            Unmanaged.passUnretained(self).release()  // The caller still holds a reference.
            guard let waiter = state.waiter else { return nil }
            state.waiter = nil
            return (waiter, state.outcome)
        }
        if let (waiter, outcome) = finished { waiter.resume(with: outcome) }
    }

    /// Records `from..<count` were never enqueued.
    func abandon(from index: Int, error: KafkaError) {
        for abandoned in index..<state.withLock({ $0.reports.count }) {
            complete(abandoned, with: .failure(error))
        }
    }

    func reports() async throws -> [DeliveryReport] {
        try await withCheckedThrowingContinuation { continuation in
            let outcome = state.withLock { state -> Result<[DeliveryReport], any Error>? in
                guard state.remaining == 0 else {
                    state.waiter = continuation
                    return nil
                }
                return state.outcome
            }
            if let outcome { continuation.resume(with: outcome) }
        }
    }
}

extension DeliveryBatch.State {
    fileprivate var outcome: Result<[DeliveryReport], any Error> {
        if let error { return .failure(error) }
        return .success(reports.map { $0! })
    }
}

private let deliveryReportCallback:
    @convention(c) (
        OpaquePointer?, UnsafePointer<rd_kafka_message_t>?, UnsafeMutableRawPointer?
    ) -> Void = { _, message, opaque in
        guard let message, let opaque, let slotPointer = message.pointee._private else { return }
        let context = Unmanaged<ProducerContext>.fromOpaque(opaque).takeUnretainedValue()
        let slot = slotPointer.assumingMemoryBound(to: DeliveryBatch.Slot.self).pointee
        // A strong reference for the rest of the callback: completing the last record lets `send` return.
        let batch = slot.batch.takeUnretainedValue()
        context.window.release()
        let native = message.pointee
        if native.err == RD_KAFKA_RESP_ERR_NO_ERROR {
            batch.delivered(slot.index, partition: native.partition, offset: native.offset)
        } else {
            batch.complete(slot.index, with: .failure(KafkaError(native.err, context: "delivery")))
        }
    }
