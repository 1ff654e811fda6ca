import Foundation
import Logging
import NotifyCore
import NotifyKafka
import NotifyTestSupport
import Synchronization
import Testing

@testable import NotifyPipeline

/// Users' producers are not ours: whatever deterministic partitioner and record timestamps they
/// use, the live pipeline gives the commands `notify render` gives (issue 17).
@Suite(.serialized) struct ProducerPartitioningTests {
    /// How a producer writes the scenario.
    enum Producer: String, CaseIterable, Sendable {
        /// kcat as it comes: librdkafka's default partitioner (CRC32), record timestamps from its clock.
        case kcat
        /// Go's sarama default (FNV-1a), with record timestamps that run backwards against `at`.
        case fnv1aBackwardsTimestamps
        /// The Java partitioner and `at` as the record timestamp, as our own producers do.
        case murmur2
    }

    /// Counts the records each topic had misplaced.
    final class MisplacedCounts: Sendable {
        let counts = Mutex<[String: Int]>([:])
        var observer: PipelineObserver {
            PipelineObserver(onMisplaced: { topic, count in self.counts.withLock { $0[topic, default: 0] += count } })
        }
    }

    /// Keeps the warnings a pipeline logs.
    final class CapturedWarnings: LogHandler, @unchecked Sendable {
        let lines = Mutex<[String]>([])
        var metadata: Logger.Metadata = [:]
        var logLevel: Logger.Level = .warning
        subscript(metadataKey key: String) -> Logger.Metadata.Value? {
            get { metadata[key] }
            set { metadata[key] = newValue }
        }
        func log(event: LogEvent) {
            lines.withLock { $0.append(event.message.description) }
        }
    }

    static func produce(_ events: [ScenarioEvent], with producer: Producer, to broker: EmbeddedBroker) async throws {
        switch producer {
        case .murmur2:
            try await NotifyPipelineTests.produce(events, to: broker, spacing: .milliseconds(50))
        case .kcat:
            let kcat = try #require(kcatExecutable, "kcat is not installed: bash Scripts/setup.sh installs it")
            for event in events {
                let key = try InputEvent.decode(topic: event.topic, value: Array(event.json.utf8)).key
                let result = try await runChildProcess(
                    kcat, ["-b", broker.bootstrapServers, "-P", "-t", event.topic, "-K", "\t"],
                    input: Data("\(key)\t\(event.json)\n".utf8))
                #expect(result.status == 0, "kcat: \(result.errorText)")
                try await Task.sleep(for: .milliseconds(50))
            }
        case .fnv1aBackwardsTimestamps:
            let producer = try KafkaProducer(configuration: client(broker), logger: testLogger)
            for (index, event) in events.enumerated() {
                let key = Array(try InputEvent.decode(topic: event.topic, value: Array(event.json.utf8)).key.utf8)
                _ = try await producer.send(
                    OutgoingRecord(
                        topic: event.topic, key: key, value: Array(event.json.utf8),
                        partition: KafkaPartitioner.fnv1a.partition(of: key, partitionCount: 4),
                        timestampMilliseconds: 1_000_000_000_000 - Int64(index) * 60_000))
                try await Task.sleep(for: .milliseconds(50))
            }
            await producer.close()
        }
    }

    @Test(arguments: Producer.allCases, [1, 2])
    func theDemoGivesRendersCommandsWhateverTheProducer(_ producer: Producer, instances: Int) async throws {
        let configuration = try testCoreConfiguration()
        let events = try scenarioEvents("Schemas/examples/scenarios/demo.json")
        let expected = try rendered(events, configuration: configuration)
        try await withPipelineBroker { broker in
            let misplaced = MisplacedCounts()
            let warnings = CapturedWarnings()
            let logger = Logger(label: "producer-partitioning") { _ in warnings }
            let pipelines = (0..<instances).map { _ in
                RunningPipeline(broker, configuration: configuration, observer: misplaced.observer, logger: logger)
            }
            for pipeline in pipelines { try await pipeline.ready() }
            try await Self.produce(events, with: producer, to: broker)
            let live = try await readCommands(from: broker) { $0.count >= expected.count }
            // Nothing more comes: a duplicate or a late badge would show within the stages' waits.
            try await Task.sleep(for: .seconds(4))
            let settled = try await readCommands(from: broker) { $0.count >= expected.count }
            for pipeline in pipelines { try await pipeline.stop() }
            #expect(fingerprints(live) == fingerprints(expected))
            #expect(fingerprints(settled) == fingerprints(expected))
            #expect(!settled.contains { $0.messageId != nil && $0.content["badge"] == nil })

            // Misplaced records are counted for the producers that misplace; none for murmur2.
            let counts = misplaced.counts.withLock { $0 }
            let shouldMisplace = events.contains { event in
                guard let key = try? InputEvent.decode(topic: event.topic, value: Array(event.json.utf8)).key,
                    event.topic != Topic.identities
                else { return false }
                let bytes = Array(key.utf8)
                let used: KafkaPartitioner = producer == .kcat ? .crc32 : producer == .murmur2 ? .murmur2 : .fnv1a
                return used.partition(of: bytes, partitionCount: 4)
                    != KafkaPartitioner.murmur2.partition(of: bytes, partitionCount: 4)
            }
            let partitioningWarnings = warnings.lines.withLock { $0 }.filter {
                $0.contains("than murmur2 of their key gives")
            }
            if producer == .murmur2 {
                #expect(counts.isEmpty, "\(counts)")
                #expect(partitioningWarnings.isEmpty, "\(partitioningWarnings)")
            } else {
                #expect(
                    shouldMisplace,
                    "the scenario's keys must land elsewhere with \(producer) for this test to mean anything")
                #expect(counts.values.reduce(0, +) > 0)
                // One warning per misplaced topic and instance, naming the topic and the partitioner to set.
                for topic in counts.keys {
                    #expect(
                        partitioningWarnings.contains {
                            $0.contains("Records of \(topic) arrive") && $0.contains("murmur2_random")
                        },
                        "no warning for \(topic): \(partitioningWarnings)")
                }
                #expect(partitioningWarnings.count <= counts.count * instances)
            }
        }
    }
}

/// kcat's path, if it is installed.
let kcatExecutable: String? = ["/usr/bin/kcat", "/usr/local/bin/kcat"].first {
    FileManager.default.isExecutableFile(atPath: $0)
}
