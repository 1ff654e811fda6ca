import Logging
import NotifyKafka
import Synchronization
import Testing

/// One set of pass-through properties serves every client: the other role's properties are left
/// out instead of being ignored by librdkafka with a warning.
@Suite struct ClientConfigurationTests {
    @Test func eachClientTakesOnlyThePropertiesOfItsRole() async throws {
        try await withEmbeddedBroker(topics: ["shared-settings": 1]) { broker in
            let log = RecordedLog()
            let shared = clientConfiguration(broker, ["fetch.wait.max.ms": "5", "linger.ms": "2"])
            let producer = try KafkaProducer(configuration: shared, logger: log.logger)
            let admin = try KafkaAdmin(configuration: shared, logger: log.logger)
            let consumer = try KafkaConsumer(
                configuration: .init(client: shared, groupId: "shared-settings"), logger: log.logger)
            _ = try await producer.send([record("shared-settings", key: "k", value: "v")])
            _ = try await admin.metadata(of: "shared-settings")
            await producer.close()
            await consumer.close()
            #expect(log.messages.filter { $0.hasPrefix("CONFWARN") } == [])
        }
    }

    @Test func librdkafkasConfigurationWarningsReachTheLog() async throws {
        // What the test above looks for can be seen: a deprecated property draws a CONFWARN.
        try await withEmbeddedBroker(topics: [:]) { broker in
            let log = RecordedLog()
            let producer = try KafkaProducer(
                configuration: clientConfiguration(broker, ["socket.blocking.max.ms": "100"]), logger: log.logger)
            await producer.close()
            #expect(log.messages.contains { $0.hasPrefix("CONFWARN") && $0.contains("socket.blocking.max.ms") })
        }
    }
}

/// Log lines written through ``logger``, kept for a test to read.
final class RecordedLog: Sendable {
    private let lines = Mutex<[String]>([])

    /// Everything logged so far, as "facility message".
    var messages: [String] { lines.withLock { $0 } }

    /// A logger at debug level that writes here.
    var logger: Logger {
        var logger = Logger(label: "notify.tests.recorded") { _ in Handler(log: self) }
        logger.logLevel = .debug
        return logger
    }

    private struct Handler: LogHandler {
        let log: RecordedLog
        var metadata: Logger.Metadata = [:]
        var metadataProvider: Logger.MetadataProvider?
        var logLevel: Logger.Level = .debug

        subscript(metadataKey key: String) -> Logger.Metadata.Value? {
            get { metadata[key] }
            set { metadata[key] = newValue }
        }

        func log(event: LogEvent) {
            let facility = event.metadata?["librdkafka.facility"].map { "\($0) " } ?? ""
            log.lines.withLock { $0.append(facility + event.message.description) }
        }
    }
}
