import Dispatch
import Synchronization

/// Hands batches from the consumer's poll thread to one async reader, with a
/// bounded buffer: the poll thread waits while the reader is behind.
final class RecordBatchHandoff: Sendable {
    private struct State {
        /// Batches waiting for the reader, with how many records of each partition each holds.
        var buffer: [(records: [KafkaRecord], counts: [TopicPartition: Int64])] = []
        /// How many records of each partition the buffer holds, with those of a batch waiting for room.
        var buffered: [TopicPartition: Int64] = [:]

        mutating func uncount(_ counts: [TopicPartition: Int64]) {
            for (partition, count) in counts {
                let left = (buffered[partition] ?? 0) - count
                buffered[partition] = left > 0 ? left : nil
            }
        }
        var reader: CheckedContinuation<[KafkaRecord]?, any Error>?
        var writerWaiting = false
        var finished = false
        var failure: KafkaError?
    }

    private let state = Mutex(State())
    private let space = DispatchSemaphore(value: 0)
    private let capacity: Int

    init(capacity: Int = 4) {
        self.capacity = capacity
    }

    /// Called on the poll thread: hands `batch` over, waiting while the buffer is full.
    /// After ``finish(throwing:)`` the batch is dropped (its offsets were never stored).
    func push(_ batch: [KafkaRecord]) {
        // Fetched already, so counted as buffered while it waits for room (see ``bufferedCounts()``).
        let counts = Self.counts(of: batch)
        var counted = false
        while true {
            enum Step {
                case resume(CheckedContinuation<[KafkaRecord]?, any Error>)
                case buffered, wait, dropped
            }
            let step = state.withLock { state -> Step in
                if state.finished || state.reader != nil, counted { state.uncount(counts) }
                if state.finished { return .dropped }
                if let reader = state.reader {
                    state.reader = nil
                    return .resume(reader)
                }
                if !counted { state.buffered.merge(counts, uniquingKeysWith: +) }
                counted = true
                if state.buffer.count < capacity {
                    state.buffer.append((batch, counts))
                    return .buffered
                }
                state.writerWaiting = true
                return .wait
            }
            switch step {
            case .resume(let reader):
                reader.resume(returning: batch)
                return
            case .buffered, .dropped: return
            case .wait: space.wait()
            }
        }
    }

    /// The next batch, or `nil` once finished and drained. Throws
    /// `CancellationError` if the waiting task is cancelled.
    func next() async throws -> [KafkaRecord]? {
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                enum Step {
                    case batch([KafkaRecord])
                    case end(KafkaError?)
                    case cancelled, wait
                }
                let (step, wakeWriter) = state.withLock { state -> (Step, Bool) in
                    if !state.buffer.isEmpty {
                        let (batch, counts) = state.buffer.removeFirst()
                        state.uncount(counts)
                        let wake = state.writerWaiting
                        state.writerWaiting = false
                        return (.batch(batch), wake)
                    }
                    if state.finished { return (.end(state.failure), false) }
                    if Task.isCancelled { return (.cancelled, false) }
                    state.reader = continuation
                    return (.wait, false)
                }
                if wakeWriter { space.signal() }
                switch step {
                case .batch(let batch): continuation.resume(returning: batch)
                case .end(let failure?): continuation.resume(throwing: failure)
                case .end(nil): continuation.resume(returning: nil)
                case .cancelled: continuation.resume(throwing: CancellationError())
                case .wait: break
                }
            }
        } onCancel: {
            let reader = state.withLock { state in
                defer { state.reader = nil }
                return state.reader
            }
            reader?.resume(throwing: CancellationError())
        }
    }

    /// Drops buffered records of `partitions` (they are being given up, unprocessed).
    func purge(_ partitions: Set<TopicPartition>) {
        state.withLock { state in
            state.buffer = state.buffer
                .map {
                    (
                        $0.records.filter { !partitions.contains($0.topicPartition) },
                        $0.counts.filter { !partitions.contains($0.key) }
                    )
                }
                .filter { !$0.records.isEmpty }
            for partition in partitions { state.buffered[partition] = nil }
        }
    }

    /// How many records of each partition are buffered: fetched, not yet handed to the reader.
    func bufferedCounts() -> [TopicPartition: Int64] {
        state.withLock { $0.buffered }
    }

    private static func counts(of batch: [KafkaRecord]) -> [TopicPartition: Int64] {
        var counts: [TopicPartition: Int64] = [:]
        var index = batch.startIndex
        while index < batch.endIndex {
            // Records of a partition come in runs: one look-up per run.
            let partition = batch[index].topicPartition
            var end = index + 1
            while end < batch.endIndex, batch[end].partition == partition.partition, batch[end].topic == partition.topic
            { end += 1 }
            counts[partition, default: 0] += Int64(end - index)
            index = end
        }
        return counts
    }

    /// Ends the sequence (after what is buffered) and releases a waiting poll thread.
    func finish(throwing failure: KafkaError? = nil) {
        let (reader, wakeWriter) = state.withLock { state in
            state.finished = true
            state.failure = state.failure ?? failure
            defer {
                state.reader = nil
                state.writerWaiting = false
            }
            return (state.reader, state.writerWaiting)
        }
        if wakeWriter { space.signal() }
        if let reader {
            if let failure { reader.resume(throwing: failure) } else { reader.resume(returning: nil) }
        }
    }
}

/// The records of a consumer, a batch at a time: one `await` per batch.
public struct KafkaRecordBatches: AsyncSequence, Sendable {
    public typealias Element = [KafkaRecord]

    let handoff: RecordBatchHandoff

    public struct AsyncIterator: AsyncIteratorProtocol {
        let handoff: RecordBatchHandoff

        public mutating func next() async throws -> [KafkaRecord]? {
            try await handoff.next()
        }
    }

    public func makeAsyncIterator() -> AsyncIterator {
        AsyncIterator(handoff: handoff)
    }
}

/// The records of a consumer one by one, built on ``KafkaRecordBatches``.
public struct KafkaRecords: AsyncSequence, Sendable {
    public typealias Element = KafkaRecord

    let batches: KafkaRecordBatches

    public struct AsyncIterator: AsyncIteratorProtocol {
        var batches: KafkaRecordBatches.AsyncIterator
        var pending: ArraySlice<KafkaRecord> = []

        public mutating func next() async throws -> KafkaRecord? {
            while pending.isEmpty {
                guard let batch = try await batches.next() else { return nil }
                pending = batch[...]
            }
            return pending.popFirst()
        }
    }

    public func makeAsyncIterator() -> AsyncIterator {
        AsyncIterator(batches: batches.makeAsyncIterator())
    }
}
