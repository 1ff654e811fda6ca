import ArgumentParser
import Foundation
import Logging
import NotifyKafka
import NotifySinks

/// `notify-bench ledger-restore`: the time a sink's ledger takes to restore from a large
/// `notify.outcomes`, bounded by its group's committed offsets on `notify.commands` against the
/// whole topic, on one embedded broker in one run.
///
/// The outcomes are stamped evenly over the 28 days before now, as steady traffic leaves them;
/// the group's commands are committed up to commands stamped `--lag` ago, so the bounded restore
/// reads what came in the last lag plus the runtime's margin (an hour). The embedded broker keeps
/// at most about 5 MB per partition (librdkafka's mock cluster drops the oldest batches beyond),
/// so the outcomes are zstd-compressed and spread over `--partitions`; the run stops with an error
/// if the broker dropped any.
struct LedgerRestoreBenchmark: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "ledger-restore",
        abstract: "Ledger restore time and records read over a large notify.outcomes: bounded vs whole topic."
    )

    @Option(help: "Outcomes on notify.outcomes.")
    var outcomes = 10_000_000

    @Option(help: "Seconds between the oldest command the group reads again and now.")
    var lag = 600

    @Option(help: "Partitions of notify.outcomes (the embedded broker keeps about 5 MB of each).")
    var partitions: Int32 = 64

    func validate() throws {
        guard outcomes > 0, lag >= 0, partitions > 0 else {
            throw ValidationError("--outcomes and --partitions must be positive, --lag not negative")
        }
    }

    private static let window: TimeInterval = 28 * 86_400

    func run() async throws {
        var logger = Logger(label: "notify.bench.ledger-restore")
        logger.logLevel = .error
        let (bounded, whole, fill) = try await EmbeddedBroker.withBroker(logger: logger) { broker in
            try await broker.createTopic("notify.commands", partitions: 8)
            try await broker.createTopic("notify.outcomes", partitions: partitions)
            let kafka = KafkaClientConfiguration(bootstrapServers: broker.bootstrapServers, clientId: "notify-bench")
            let now = Date()
            let filling = ContinuousClock.now
            try await fillOutcomes(kafka: kafka, now: now, logger: logger)
            let fill = ContinuousClock.now - filling
            try await checkNothingDropped(kafka: kafka, logger: logger)
            try await commitCommands(kafka: kafka, now: now, logger: logger)
            let bounded = try await SinkRuntime.restoreLedger(
                kind: "jsonl", configuration: SinkRuntimeConfiguration(kafka: kafka), logger: logger)
            let whole = try await SinkRuntime.restoreLedger(
                kind: "jsonl", configuration: SinkRuntimeConfiguration(kafka: kafka, ledgerRestoreMargin: nil),
                logger: logger)
            return (bounded, whole, fill)
        }
        print(
            String(
                format:
                    "ledger restore over %d outcomes (filled in %.1f s): bounded %d records in %.2f s; whole topic %d records in %.2f s",
                outcomes, fill.seconds, bounded.recordsRead, bounded.duration.seconds, whole.recordsRead,
                whole.duration.seconds))
    }

    /// `outcomes` jsonl outcomes, stamped evenly from 28 days ago to now, in batches with no wait per record.
    private func fillOutcomes(kafka: KafkaClientConfiguration, now: Date, logger: Logger) async throws {
        var compressed = kafka
        compressed.properties["compression.codec"] = "zstd"
        let producer = try KafkaProducer(configuration: compressed, logger: logger)
        let first = (now.timeIntervalSince1970 - Self.window) * 1000
        let step = Self.window * 1000 / Double(outcomes)
        var pending: PendingDeliveries?
        var records: [OutgoingRecord] = []
        records.reserveCapacity(50_000)
        // Formatting dominates the fill: outcomes of one second share their `at`.
        var at = (second: Int64.min, text: "")
        for index in 0..<outcomes {
            let milliseconds = Int64(first + step * Double(index))
            if milliseconds / 1000 != at.second {
                at = (
                    milliseconds / 1000,
                    Date(timeIntervalSince1970: TimeInterval(milliseconds / 1000)).formatted(.iso8601)
                )
            }
            let value =
                #"{"type":"notification.outcome","id":"c\#(index):delivered","at":"\#(at.text)","commandId":"c\#(index)","#
                + #""sink":"jsonl","recipient":{"userId":"u\#(index % 100_000)","deviceId":"d","platform":"ios","provider":"apns"},"#
                + #""outcome":"delivered"}"#
            records.append(
                OutgoingRecord(
                    topic: "notify.outcomes", key: Array("u\(index % 100_000)".utf8), value: Array(value.utf8),
                    partition: Int32(index % Int(partitions)), timestampMilliseconds: milliseconds))
            if records.count == 50_000 {
                // The previous batch is acknowledged while this one was built; one batch in the air at a time.
                _ = try await pending?.reports()
                pending = await producer.enqueue(records)
                records.removeAll(keepingCapacity: true)
            }
        }
        _ = try await pending?.reports()
        if !records.isEmpty { _ = try await producer.send(records) }
        await producer.close()
    }

    /// Throws unless every partition of notify.outcomes still starts at offset 0.
    private func checkNothingDropped(kafka: KafkaClientConfiguration, logger: Logger) async throws {
        let admin = try KafkaAdmin(configuration: kafka, logger: logger)
        var kept = 0
        for partition in 0..<partitions {
            let marks = try await admin.watermarks(TopicPartition(topic: "notify.outcomes", partition: partition))
            guard marks.low == 0 else {
                throw ValidationError(
                    "the embedded broker dropped the oldest outcomes of partition \(partition): use more --partitions")
            }
            kept += Int(marks.high)
        }
        guard kept == outcomes else { throw ValidationError("notify.outcomes holds \(kept) outcomes, not \(outcomes)") }
    }

    /// One settled command a day old and one stamped `lag` ago per partition; the jsonl sinks'
    /// group committed up to the second.
    private func commitCommands(kafka: KafkaClientConfiguration, now: Date, logger: Logger) async throws {
        let producer = try KafkaProducer(configuration: kafka, logger: logger)
        var records: [OutgoingRecord] = []
        var committed: [TopicPartition: Int64] = [:]
        for partition in Int32(0)..<8 {
            for age in [86_400, lag] {
                records.append(
                    OutgoingRecord(
                        topic: "notify.commands", key: nil, value: Array("{}".utf8), partition: partition,
                        timestampMilliseconds: Int64((now.timeIntervalSince1970 - TimeInterval(age)) * 1000)))
            }
            committed[TopicPartition(topic: "notify.commands", partition: partition)] = 1
        }
        _ = try await producer.send(records)
        await producer.close()
        let consumer = try KafkaConsumer(
            configuration: KafkaConsumerConfiguration(client: kafka, groupId: "notify-sink-jsonl"), logger: logger)
        try await consumer.commit(committed)
        await consumer.close()
    }
}
