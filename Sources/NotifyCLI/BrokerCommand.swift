import ArgumentParser
import Foundation
import Logging
import NotifyKafka

/// `notify broker`: the embedded Kafka-protocol broker, until SIGINT or SIGTERM.
struct BrokerCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "broker",
        abstract: "Run an embedded Kafka-protocol broker (librdkafka's mock cluster) for development and tests.",
        discussion: """
            Prints the bootstrap list as the first line of standard output, then serves until SIGINT or SIGTERM.

            Limits: data is kept in memory only, at most about 5 MB or 100,000 batches per partition (the \
            oldest are dropped); there is no compaction; TxnOffsetCommit is not honoured, so transactions \
            cannot be proven on it. Use Apache Kafka in production.
            """
    )

    @Option(name: .long, help: "Topic to create besides the catalog's, NAME:PARTITIONS (repeatable).")
    var topic: [String] = []

    @Flag(help: "Do not create the topics of Schemas/topics.json.")
    var noCatalog = false

    @Option(name: .long, help: "Number of brokers in the cluster.")
    var brokers: Int = 1

    @OptionGroup var schemas: SchemasOption
    @OptionGroup var log: LogOptions

    func run() async throws {
        try log.startLogging()
        guard brokers >= 1 else { throw ValidationError("--brokers must be at least 1.") }
        let catalog = try noCatalog ? [] : schemas.loadTopicCatalog().topics.map { ($0.name, $0.partitions) }
        let topics = try catalog + topic.map(Self.parseTopic)
        let logger = Logger(label: "notify.broker")
        try await EmbeddedBroker.withBroker(brokers: brokers, logger: logger) { broker in
            for (name, partitions) in topics { try await broker.createTopic(name, partitions: partitions) }
            StandardOutput.writeLine(broker.bootstrapServers)
            logger.info(
                "Embedded broker serving",
                metadata: [
                    "bootstrap": "\(broker.bootstrapServers)",
                    "topics": "\(topics.map { "\($0.0):\($0.1)" }.joined(separator: ","))",
                ])
            await TerminationSignal.wait()
        }
    }

    static func parseTopic(_ text: String) throws -> (String, Int32) {
        let parts = text.split(separator: ":", omittingEmptySubsequences: false)
        guard parts.count == 2, !parts[0].isEmpty, let partitions = Int32(parts[1]), partitions > 0 else {
            throw ValidationError(
                "--topic \(text): expected NAME:PARTITIONS with PARTITIONS > 0, e.g. chat.messages:16.")
        }
        return (String(parts[0]), partitions)
    }
}
