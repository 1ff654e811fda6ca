import CRdkafka
import Foundation

/// Settings shared by every Kafka client: where the cluster is and any
/// librdkafka property (`security.protocol`, `sasl.*`, `ssl.*`, ...), passed
/// through unchanged.
public struct KafkaClientConfiguration: Sendable {
    /// `HOST:PORT,...`
    public var bootstrapServers: String
    /// Reported to the brokers; shows in their logs and metrics.
    public var clientId: String
    /// librdkafka properties, applied after the typed settings, so they win. One set serves
    /// every client: a property librdkafka defines for consumers only is left out of producers
    /// and admin clients, and one for producers only out of consumers, where librdkafka would
    /// ignore it with a warning at every start.
    public var properties: [String: String]
    /// Where producers and consumers made with this configuration report librdkafka's statistics,
    /// and how often (it sets `statistics.interval.ms`); nil: they report none. Admin clients never do.
    public var statistics: KafkaStatisticsReporting?

    public init(bootstrapServers: String, clientId: String = "notify", properties: [String: String] = [:]) {
        self.bootstrapServers = bootstrapServers
        self.clientId = clientId
        self.properties = properties
    }

    /// What a client is to librdkafka, which decides the properties it takes.
    enum Role {
        /// A producer, or an admin client (a producer handle to librdkafka).
        case producer
        case consumer

        /// The properties librdkafka 2.0.2 defines only for the other role
        /// (CONFIGURATION.md, types P and C; callbacks cannot be set as text).
        var foreignProperties: Set<String> {
            switch self {
            case .producer:
                [
                    "auto.commit.enable", "auto.commit.interval.ms", "auto.offset.reset", "check.crcs",
                    "consume.callback.max.messages", "coordinator.query.interval.ms", "enable.auto.commit",
                    "enable.auto.offset.store", "enable.partition.eof", "fetch.error.backoff.ms", "fetch.max.bytes",
                    "fetch.message.max.bytes", "fetch.min.bytes", "fetch.wait.max.ms", "group.id", "group.instance.id",
                    "group.protocol.type", "heartbeat.interval.ms", "isolation.level", "max.partition.fetch.bytes",
                    "max.poll.interval.ms", "offset.store.method", "offset.store.path", "offset.store.sync.interval.ms",
                    "partition.assignment.strategy", "queued.max.messages.kbytes", "queued.min.messages",
                    "session.timeout.ms",
                ]
            case .consumer:
                [
                    "acks", "batch.num.messages", "batch.size", "compression.codec", "compression.level",
                    "compression.type",
                    "delivery.report.only.error", "delivery.timeout.ms", "enable.gapless.guarantee",
                    "enable.idempotence",
                    "linger.ms", "message.send.max.retries", "message.timeout.ms", "partitioner",
                    "produce.offset.report",
                    "queue.buffering.backpressure.threshold", "queue.buffering.max.kbytes",
                    "queue.buffering.max.messages",
                    "queue.buffering.max.ms", "queuing.strategy", "request.required.acks", "request.timeout.ms",
                    "retries",
                    "retry.backoff.ms", "sticky.partitioning.linger.ms", "transaction.timeout.ms", "transactional.id",
                ]
            }
        }
    }

    /// The typed settings of a client in `role` and the pass-through properties that apply
    /// to it, merged: later wins.
    func merged(with defaults: [String: String], for role: Role) -> [String: String] {
        var result = defaults
        result["bootstrap.servers"] = bootstrapServers
        result["client.id"] = clientId
        let foreign = role.foreignProperties
        for (key, value) in properties where !foreign.contains(key) { result[key] = value }
        return result
    }
}

extension KafkaClientConfiguration {
    /// A librdkafka property written `name=value` (as `-X` takes it), or nil if it is not one.
    public static func property(_ text: String) -> (name: String, value: String)? {
        guard let equals = text.firstIndex(of: "="), equals != text.startIndex else { return nil }
        return (String(text[..<equals]), String(text[text.index(after: equals)...]))
    }
}

extension KafkaClientConfiguration {
    /// What librdkafka says of `name=value` when it refuses it ("No such configuration property: ...",
    /// an invalid value), or nil when it takes it. Nothing connects; the property is tried on a fresh
    /// configuration and discarded.
    public static func problem(withProperty name: String, value: String) -> String? {
        let configuration = rd_kafka_conf_new()
        defer { rd_kafka_conf_destroy(configuration) }
        var errorText = [CChar](repeating: 0, count: 512)
        guard rd_kafka_conf_set(configuration, name, value, &errorText, errorText.count) != RD_KAFKA_CONF_OK else {
            return nil
        }
        return text(of: errorText)
    }

    /// Every property name librdkafka defines (global and topic), for suggestions: the first column of
    /// the table `rd_kafka_conf_properties_show` prints (into memory here).
    public static let librdkafkaPropertyNames: [String] = {
        var buffer: UnsafeMutablePointer<CChar>?
        var size = 0
        guard let stream = open_memstream(&buffer, &size) else { return [] }
        rd_kafka_conf_properties_show(stream)
        fclose(stream)
        guard let buffer else { return [] }
        defer { free(buffer) }
        let table = String(cString: buffer)
        var names = Set<String>()
        for line in table.split(separator: "\n") {
            guard let name = line.split(separator: "|", maxSplits: 1).first?.trimmingCharacters(in: .whitespaces),
                !name.isEmpty, name.first!.isLowercase, !name.contains(" ")
            else { continue }
            names.insert(name)
        }
        return names.sorted()
    }()
}
