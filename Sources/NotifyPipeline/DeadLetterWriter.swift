import Logging
import NotifyCore
import NotifyKafka
import NotifyRecords

/// Writes dead letters to `notify.dlq` so that they fit what the topic takes, and never holds a
/// partition back: each is tried three times (the third time without its value, keeping the
/// reason and the source), and one that still fails is counted (``PipelineObserver/onDeadLetterLost``)
/// and logged with its source, and the partition moves on.
public struct DeadLetterWriter: Sendable {
    /// The largest record written, key and headers included.
    public let limit: DeadLetterLimit
    let producer: KafkaProducer
    let topic: String
    let observer: PipelineObserver
    let logger: Logger

    init(
        limit: DeadLetterLimit, producer: KafkaProducer, topic: String = Topic.dlq, observer: PipelineObserver,
        logger: Logger
    ) {
        self.limit = limit
        self.producer = producer
        self.topic = topic
        self.observer = observer
        self.logger = logger
    }

    /// Logs each of `letters` as a warning with its reason and source (never its value).
    func warn(_ letters: [DeadLetter]) {
        for letter in letters {
            logger.warning(
                "Dead letter: \(letter.reason)",
                metadata: [
                    "topic": "\(letter.sourceTopic)", "partition": "\(letter.sourcePartition)",
                    "offset": "\(letter.sourceOffset)",
                ])
        }
    }

    /// Logs, writes and counts `letters` on their own (not with a stage's outputs); returns once each
    /// is acknowledged or given up.
    func deadLetter(_ letters: [DeadLetter]) async {
        guard !letters.isEmpty else { return }
        warn(letters)
        let written = await write(letters)
        observer.produced(written.records, commands: [], deadLetters: written.letters)
    }

    /// Writes `letters`; returns once each is acknowledged or given up, with those acknowledged and
    /// their records as written.
    func write(_ letters: [DeadLetter]) async -> (letters: [DeadLetter], records: [OutgoingRecord]) {
        var written: (letters: [DeadLetter], records: [OutgoingRecord]) = ([], [])
        for letter in letters {
            if let record = await write(letter) {
                written.letters.append(letter)
                written.records.append(record)
            }
        }
        return written
    }

    private func write(_ letter: DeadLetter) async -> OutgoingRecord? {
        let limit = await limit.bytes
        let attempts = [
            letter.record(fitting: limit, topic: topic), letter.record(fitting: limit, topic: topic),
            letter.record(fitting: 0, topic: topic),
        ]
        var lastError: (any Error)?
        for (index, record) in attempts.enumerated() {
            do {
                _ = try await producer.send(record)
                return record
            } catch {
                lastError = error
                if index < attempts.count - 1 { try? await Task.sleep(for: .milliseconds(200 << index)) }
            }
        }
        observer.onDeadLetterLost(letter)
        logger.error(
            "A dead letter could not be written; the partition moves on without it",
            metadata: [
                "topic": "\(letter.sourceTopic)", "partition": "\(letter.sourcePartition)",
                "offset": "\(letter.sourceOffset)",
                "reason": "\(letter.reason)", "error": "\(lastError.map { "\($0)" } ?? "")",
            ])
        return nil
    }
}
