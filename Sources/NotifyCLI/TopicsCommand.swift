import ArgumentParser
import Logging
import NotifyCore
import NotifyKafka

/// `notify topics`: topic administration.
struct TopicsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "topics",
        abstract: "Manage the topics of Schemas/topics.json on a Kafka cluster.",
        subcommands: [CreateTopicsCommand.self]
    )
}

/// `notify topics create`: every topic of the catalog, with its partitions, cleanup policy and retention.
struct CreateTopicsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "create",
        abstract: "Create every topic in Schemas/topics.json (existing topics are left as they are)."
    )

    @OptionGroup var kafka: KafkaOptions
    @OptionGroup var schemas: SchemasOption
    @OptionGroup var log: LogOptions

    @Option(help: "Replication factor of every topic.")
    var replicationFactor: Int32 = 3

    func run() async throws {
        try log.startLogging()
        let catalog = try schemas.loadTopicCatalog()
        let admin = try KafkaAdmin(
            configuration: try await kafka.reachableClient(clientId: "notify-topics"),
            logger: Logger(label: "notify.topics"))
        let specifications = catalog.topics.map(TopicSpecification.init(catalogEntry:))
            .map {
                var spec = $0
                spec.replicationFactor = replicationFactor
                return spec
            }
        let created = try await admin.createTopics(specifications)
        for topic in catalog.topics {
            let state = created.contains(topic.name) ? "created" : "exists "
            StandardOutput.writeLine("\(state) \(topic.name) (\(topic.partitions) partitions, \(topic.cleanupPolicy))")
        }
        StandardOutput.writeLine(
            """
            Producers of chat.*: key each record as Schemas/topics.json says and prefer the murmur2 partitioner \
            (Java's default; librdkafka and kcat: partitioner=murmur2_random). Any other deterministic partitioner \
            works, at the cost of a hop for each misplaced record (docs/operations.md, "Producers and partitioners").
            """)
    }
}

extension TopicSpecification {
    /// The specification of a catalog topic (replication factor 1).
    init(catalogEntry topic: TopicCatalog.Topic) {
        var configs = ["cleanup.policy": topic.cleanupPolicy]
        if let retention = topic.retentionMs { configs["retention.ms"] = String(retention) }
        self.init(name: topic.name, partitions: topic.partitions, configs: configs)
    }
}
