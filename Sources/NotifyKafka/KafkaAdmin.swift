import CRdkafka
import Logging

/// A topic to create.
public struct TopicSpecification: Sendable, Hashable {
    public var name: String
    public var partitions: Int32
    public var replicationFactor: Int32
    /// Topic configs, e.g. `cleanup.policy=compact`, `retention.ms`.
    public var configs: [String: String]

    public init(name: String, partitions: Int32, replicationFactor: Int32 = 1, configs: [String: String] = [:]) {
        self.name = name
        self.partitions = partitions
        self.replicationFactor = replicationFactor
        self.configs = configs
    }
}

/// What the cluster says of a topic.
public struct TopicMetadata: Sendable, Hashable {
    public var name: String
    public var partitionCount: Int
}

/// Cluster administration: topics and metadata.
public final class KafkaAdmin: Sendable {
    private let handle: NativeHandle
    private let context: ClientContext
    private let blockingCalls = BlockingCallQueue(label: "notify.kafka.admin")

    public init(configuration: KafkaClientConfiguration, logger: Logger) throws {
        context = ClientContext(logger: logger)
        let native = try NativeConfiguration(configuration.merged(with: [:], for: .producer))
        try native.install(context)
        handle = NativeHandle(pointer: try makeNativeClient(type: RD_KAFKA_PRODUCER, configuration: native))
    }

    deinit {
        rd_kafka_destroy(handle.pointer)
    }

    /// Creates `topics`. A topic that exists already is left as it is when
    /// `ignoreExisting`; any other failure throws, naming the topic.
    /// Returns the names of the topics it created.
    @discardableResult
    public func createTopics(
        _ topics: [TopicSpecification], ignoreExisting: Bool = true, timeoutMilliseconds: Int32 = 30_000
    ) async throws -> [String] {
        let handle = handle
        return try await blockingCalls.run {
            var newTopics: [OpaquePointer?] = []
            defer { for topic in newTopics { rd_kafka_NewTopic_destroy(topic) } }
            for topic in topics {
                var errorText = [CChar](repeating: 0, count: 512)
                guard
                    let newTopic = rd_kafka_NewTopic_new(
                        topic.name, topic.partitions, topic.replicationFactor, &errorText, errorText.count
                    )
                else {
                    throw KafkaError.client("topic \(topic.name): \(text(of: errorText))")
                }
                newTopics.append(newTopic)
                for (key, value) in topic.configs.sorted(by: { $0.key < $1.key }) {
                    let result = rd_kafka_NewTopic_set_config(newTopic, key, value)
                    if result != RD_KAFKA_RESP_ERR_NO_ERROR {
                        throw KafkaError(result, context: "topic \(topic.name) config \(key)")
                    }
                }
            }
            let event = try Self.adminRequest(
                handle, RD_KAFKA_ADMIN_OP_CREATETOPICS, timeoutMilliseconds: timeoutMilliseconds, what: "create topics"
            ) {
                rd_kafka_CreateTopics(handle.pointer, &newTopics, newTopics.count, $0, $1)
            }
            defer { rd_kafka_event_destroy(event) }
            var count = 0
            let results = rd_kafka_CreateTopics_result_topics(rd_kafka_event_CreateTopics_result(event), &count)
            var created: [String] = []
            for index in 0..<count {
                let result = results![index]
                let name = String(cString: rd_kafka_topic_result_name(result))
                let code = rd_kafka_topic_result_error(result)
                if code == RD_KAFKA_RESP_ERR_NO_ERROR {
                    created.append(name)
                } else if !(ignoreExisting && code == RD_KAFKA_RESP_ERR_TOPIC_ALREADY_EXISTS) {
                    let detail = rd_kafka_topic_result_error_string(result).map { String(cString: $0) } ?? ""
                    throw KafkaError(code, context: "create topic \(name): \(detail)")
                }
            }
            return created
        }
    }

    /// The names of the cluster's topics: a metadata request to the bootstrap servers (it creates no
    /// topic) that throws (`_TRANSPORT`, `_TIMED_OUT`, ...) when none of them answers within `timeoutMilliseconds`.
    public func topicNames(timeoutMilliseconds: Int32) async throws -> Set<String> {
        try await clusterMetadata(allTopics: true, timeoutMilliseconds: timeoutMilliseconds) { metadata in
            Set((0..<Int(metadata.topic_cnt)).map { String(cString: metadata.topics[$0].topic) })
        }
    }

    /// How many brokers the cluster has, as a metadata request to the bootstrap servers says.
    public func brokerCount(timeoutMilliseconds: Int32 = 10_000) async throws -> Int {
        try await clusterMetadata(allTopics: false, timeoutMilliseconds: timeoutMilliseconds) { Int($0.broker_cnt) }
    }

    /// What `read` takes from the cluster's metadata (of every topic, or of none), asked on a thread
    /// of the blocking calls.
    private func clusterMetadata<Result: Sendable>(
        allTopics: Bool, timeoutMilliseconds: Int32, _ read: @escaping @Sendable (rd_kafka_metadata) -> Result
    ) async throws -> Result {
        let handle = handle
        return try await blockingCalls.run {
            var metadata: UnsafePointer<rd_kafka_metadata>?
            let result = rd_kafka_metadata(handle.pointer, allTopics ? 1 : 0, nil, &metadata, timeoutMilliseconds)
            guard result == RD_KAFKA_RESP_ERR_NO_ERROR, let metadata else {
                throw KafkaError(result, context: "metadata")
            }
            defer { rd_kafka_metadata_destroy(metadata) }
            return read(metadata.pointee)
        }
    }

    /// The topic's partition count, or nil if the cluster does not know it.
    public func metadata(of topic: String, timeoutMilliseconds: Int32 = 10_000) async throws -> TopicMetadata? {
        let handle = handle
        return try await blockingCalls.run {
            let nativeTopic = rd_kafka_topic_new(handle.pointer, topic, nil)
            defer { rd_kafka_topic_destroy(nativeTopic) }
            var metadata: UnsafePointer<rd_kafka_metadata>?
            let result = rd_kafka_metadata(handle.pointer, 0, nativeTopic, &metadata, timeoutMilliseconds)
            guard result == RD_KAFKA_RESP_ERR_NO_ERROR, let metadata else {
                throw KafkaError(result, context: "metadata of \(topic)")
            }
            defer { rd_kafka_metadata_destroy(metadata) }
            guard metadata.pointee.topic_cnt > 0 else { return nil }
            let entry = metadata.pointee.topics[0]
            if entry.err == RD_KAFKA_RESP_ERR_UNKNOWN_TOPIC_OR_PART || entry.partition_cnt == 0 { return nil }
            if entry.err != RD_KAFKA_RESP_ERR_NO_ERROR { throw KafkaError(entry.err, context: "metadata of \(topic)") }
            return TopicMetadata(name: topic, partitionCount: Int(entry.partition_cnt))
        }
    }

    /// The value of the topic config `name` (`max.message.bytes`, ...) as the cluster describes it,
    /// or `nil` when the topic does not have it. Throws when the cluster does not answer or cannot
    /// describe configs (librdkafka's mock cluster, the embedded broker, cannot).
    public func topicConfig(_ topic: String, _ name: String, timeoutMilliseconds: Int32 = 10_000) async throws
        -> String?
    {
        let handle = handle
        return try await blockingCalls.run {
            var resource: OpaquePointer? = rd_kafka_ConfigResource_new(RD_KAFKA_RESOURCE_TOPIC, topic)
            defer { rd_kafka_ConfigResource_destroy(resource) }
            let event = try Self.adminRequest(
                handle, RD_KAFKA_ADMIN_OP_DESCRIBECONFIGS, timeoutMilliseconds: timeoutMilliseconds,
                what: "describe configs of \(topic)"
            ) {
                rd_kafka_DescribeConfigs(handle.pointer, &resource, 1, $0, $1)
            }
            defer { rd_kafka_event_destroy(event) }
            var resourceCount = 0
            guard
                let resources = rd_kafka_DescribeConfigs_result_resources(
                    rd_kafka_event_DescribeConfigs_result(event), &resourceCount),
                resourceCount > 0, let described = resources[0]
            else { return nil }
            let code = rd_kafka_ConfigResource_error(described)
            if code != RD_KAFKA_RESP_ERR_NO_ERROR { throw KafkaError(code, context: "describe configs of \(topic)") }
            var entryCount = 0
            guard let entries = rd_kafka_ConfigResource_configs(described, &entryCount) else { return nil }
            for index in 0..<entryCount {
                guard let entry = entries[index], String(cString: rd_kafka_ConfigEntry_name(entry)) == name else {
                    continue
                }
                return rd_kafka_ConfigEntry_value(entry).map { String(cString: $0) }
            }
            return nil
        }
    }

    /// Sends one admin request (`send` gets its options and the queue to answer on) and returns the
    /// answer's event, which the caller destroys; throws when there is none or it carries an error.
    private static func adminRequest(
        _ handle: NativeHandle, _ operation: rd_kafka_admin_op_t, timeoutMilliseconds: Int32, what: String,
        send: (OpaquePointer?, OpaquePointer?) -> Void
    ) throws -> OpaquePointer {
        let options = rd_kafka_AdminOptions_new(handle.pointer, operation)
        defer { rd_kafka_AdminOptions_destroy(options) }
        var errorText = [CChar](repeating: 0, count: 512)
        rd_kafka_AdminOptions_set_request_timeout(options, timeoutMilliseconds, &errorText, errorText.count)
        if operation == RD_KAFKA_ADMIN_OP_CREATETOPICS {
            rd_kafka_AdminOptions_set_operation_timeout(options, timeoutMilliseconds, &errorText, errorText.count)
        }
        let queue = rd_kafka_queue_new(handle.pointer)
        defer { rd_kafka_queue_destroy(queue) }
        send(options, queue)
        guard let event = rd_kafka_queue_poll(queue, timeoutMilliseconds + 5_000) else {
            throw KafkaError.client("\(what): no answer from the cluster")
        }
        let eventError = rd_kafka_event_error(event)
        if eventError != RD_KAFKA_RESP_ERR_NO_ERROR {
            let detail = String(cString: rd_kafka_event_error_string(event))
            rd_kafka_event_destroy(event)
            throw KafkaError(eventError, context: "\(what): \(detail)")
        }
        return event
    }

    /// The oldest and next offsets of a partition.
    public func watermarks(_ partition: TopicPartition, timeoutMilliseconds: Int32 = 10_000) async throws -> (
        low: Int64, high: Int64
    ) {
        let handle = handle
        return try await blockingCalls.run {
            var low: Int64 = 0
            var high: Int64 = 0
            let result = rd_kafka_query_watermark_offsets(
                handle.pointer, partition.topic, partition.partition, &low, &high, timeoutMilliseconds)
            if result != RD_KAFKA_RESP_ERR_NO_ERROR { throw KafkaError(result, context: "watermarks of \(partition)") }
            return (low, high)
        }
    }
}
