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

    @Option(
        help: "Replication factor of every topic (default: 3, or the cluster's broker count when it has fewer).")
    var replicationFactor: Int32?

    func validate() throws {
        if let replicationFactor, replicationFactor < 1 {
            throw ValidationError("--replication-factor \(replicationFactor): a topic needs at least 1 replica.")
        }
    }

    func run() async throws {
        try log.startLogging()
        let catalog = try schemas.loadTopicCatalog()
        let admin = try KafkaAdmin(
            configuration: try await kafka.reachableClient(clientId: "notify-topics"),
            logger: Logger(label: "notify.topics"))
        let factor = try Self.replicationFactor(requested: replicationFactor, brokers: try await admin.brokerCount())
        let specifications = catalog.topics.map(TopicSpecification.init(catalogEntry:))
            .map {
                var spec = $0
                spec.replicationFactor = factor
                return spec
            }
        let created: [String]
        do {
            created = try await admin.createTopics(specifications)
        } catch let error as KafkaError where error.name == "_TIMED_OUT" {
            throw CommandFailure(
                """
                \(error). On the embedded broker (`notify broker`, `notify dev`) this always happens: it cannot \
                create topics through Kafka's admin API, and creates the catalog's topics itself when it starts \
                (unless started with --no-catalog).
                """)
        }
        for topic in catalog.topics {
            let state = created.contains(topic.name) ? "created" : "exists "
            let replicas = created.contains(topic.name) ? ", replication factor \(factor)" : ""
            StandardOutput.writeLine(
                "\(state) \(topic.name) (\(topic.partitions) partitions, \(topic.cleanupPolicy)\(replicas))")
        }
        StandardOutput.writeLine(
            """
            Producers of chat.*: key each record as Schemas/topics.json says and prefer the murmur2 partitioner \
            (Java's default; librdkafka and kcat: partitioner=murmur2_random). Any other deterministic partitioner \
            works, at the cost of a hop for each misplaced record (docs/operations.md, "Producers and partitioners").
            """)
    }
}

extension CreateTopicsCommand {
    /// The replication factor to create the topics with: `requested`, which must not exceed the
    /// cluster's `brokers` (a partition's replicas are on different brokers); by default 3, or every
    /// broker of a smaller cluster.
    static func replicationFactor(requested: Int32?, brokers: Int) throws -> Int32 {
        let available = Int32(clamping: max(brokers, 1))
        guard let requested else { return min(3, available) }
        guard requested <= available else {
            throw CommandFailure(
                """
                --replication-factor \(requested): the cluster has \(brokers) broker\(brokers == 1 ? "" : "s"), so a topic \
                can have at most \(available) replica\(available == 1 ? "" : "s"). Pass --replication-factor \(available) \
                or leave it out (the embedded broker, `notify broker`, has 1 broker unless started with --brokers).
                """)
        }
        return requested
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
