import ArgumentParser
import Foundation
import Logging
import NotifyKafka

/// `notify-bench passthrough`: consume N records through the NotifyKafka module and
/// produce one record per input with the same key; the C twin is
/// `rdkafka-passthrough` (Benchmarks/passthrough.sh runs both side by side).
struct PassthroughBenchmark: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "passthrough",
        abstract: "Consume N records and produce one record of BYTES per input, same key; prints records/s."
    )

    @OptionGroup var broker: BrokerOption
    @Option(help: "Input topic.") var from: String
    @Option(help: "Output topic.") var to: String
    @Option(help: "Records to pass through.") var count: Int
    @Option(help: "Bytes per output record.") var size: Int = 700
    @Option(help: "Consumer group (default: a new one, so the input is read from the beginning).")
    var group: String = "passthrough-\(UInt32.random(in: 0...UInt32.max))"
    @Option(help: "Batches whose outputs may await acknowledgement at once.") var batchesInFlight: Int = 16

    func run() async throws {
        var logger = Logger(label: "notify.bench")
        logger.logLevel = .warning
        let client = broker.client
        let producer = try KafkaProducer(configuration: client, logger: logger)
        let consumer = try KafkaConsumer(configuration: .init(client: client, groupId: group), logger: logger)
        try consumer.subscribe([from])
        let value = [UInt8](repeating: UInt8(ascii: "x"), count: size)
        var started: ContinuousClock.Instant?
        var consumed = 0
        var stored: [TopicPartition: Int64] = [:]
        func store(_ offsets: [TopicPartition: Int64]) throws {
            let advanced = offsets.filter { stored[$0.key, default: -1] < $0.value }
            stored.merge(advanced) { max($0, $1) }
            if !advanced.isEmpty { try consumer.store(advanced) }
        }
        try await withThrowingTaskGroup(of: [TopicPartition: Int64].self) { group in
            var inFlight = 0
            for try await batch in consumer.batches {
                if started == nil { started = .now }
                let taken = batch.prefix(count - consumed)
                consumed += taken.count
                let outputs = taken.map { OutgoingRecord(topic: to, key: $0.key, value: value) }
                var next: [TopicPartition: Int64] = [:]
                for record in taken {
                    next[record.topicPartition] = max(next[record.topicPartition] ?? 0, record.offset + 1)
                }
                group.addTask { [next] in
                    _ = try await producer.send(outputs)
                    return next
                }
                inFlight += 1
                while inFlight >= batchesInFlight, let done = try await group.next() {
                    try store(done)
                    inFlight -= 1
                }
                if consumed >= count { break }
            }
            for try await done in group { try store(done) }
        }
        let seconds = (ContinuousClock.now - (started ?? .now)).seconds
        print(
            "passthrough: \(consumed) records in \(String(format: "%.3f", seconds)) s = \(Int(Double(consumed) / seconds)) records/s"
        )
        await consumer.close()
        await producer.close()
    }
}

/// `notify-bench seed`: fills a topic with COUNT records of BYTES spread over KEYS keys.
struct SeedBenchmarkInput: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "seed", abstract: "Fill a topic with benchmark input.")

    @OptionGroup var broker: BrokerOption
    @Option(help: "Topic to fill.") var topic: String
    @Option(help: "Records to produce.") var count: Int
    @Option(help: "Bytes per record.") var size: Int = 300
    @Option(help: "Distinct keys.") var keys: Int = 10_000

    func run() async throws {
        var logger = Logger(label: "notify.bench")
        logger.logLevel = .warning
        let producer = try KafkaProducer(configuration: broker.client, logger: logger)
        let value = [UInt8](repeating: UInt8(ascii: "v"), count: size)
        let chunk = 10_000
        for start in stride(from: 0, to: count, by: chunk) {
            let records = (start..<min(count, start + chunk)).map {
                OutgoingRecord(topic: topic, key: Array("key-\($0 % keys)".utf8), value: value)
            }
            _ = try await producer.send(records)
        }
        await producer.close()
        print("seed: \(count) records of \(size) bytes in \(topic)")
    }
}
