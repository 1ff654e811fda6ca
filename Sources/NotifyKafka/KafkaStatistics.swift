import CRdkafka
import Foundation

/// Figures librdkafka reports about one client every `statistics.interval.ms` (part of its
/// statistics JSON, STATISTICS.md of librdkafka).
public struct KafkaStatistics: Sendable, Equatable {
    /// One broker the client talks to (the bootstrap and coordinator entries, which have no node id, are left out).
    public struct Broker: Sendable, Equatable {
        /// The broker's node id.
        public var nodeId: Int32
        /// Average round trip of the client's requests to it over the last interval (0 when there were none).
        public var roundTripAverage: Duration
        /// Requests sent and awaiting their answer (`waitresp_cnt`).
        public var requestsInFlight: Int
    }

    /// The client instance's name (`client.id#producer-N`, `client.id#consumer-N`), unique in the process.
    public var client: String
    /// `producer` or `consumer`.
    public var type: String
    /// Messages in the producer's queues, not yet acknowledged (`msg_cnt`).
    public var queuedMessages: Int
    /// Events waiting in the client's queue for its poll loop (`replyq`).
    public var replyQueue: Int
    public var brokers: [Broker]
    /// Rebalances the consumer went through (`cgrp.rebalance_cnt`); nil for a producer.
    public var rebalances: Int?
    /// Partitions assigned to the consumer (`cgrp.assignment_size`); nil for a producer.
    public var assignedPartitions: Int?

    /// Reads librdkafka's statistics JSON; nil if it is not that.
    public init?(json: [UInt8]) {
        guard let raw = try? JSONDecoder().decode(Raw.self, from: Data(json)) else { return nil }
        client = raw.name
        type = raw.type
        queuedMessages = raw.msg_cnt ?? 0
        replyQueue = raw.replyq ?? 0
        brokers = (raw.brokers ?? [:]).values.filter { $0.nodeid >= 0 }.sorted { $0.nodeid < $1.nodeid }.map {
            Broker(
                nodeId: $0.nodeid, roundTripAverage: .microseconds($0.rtt?.avg ?? 0),
                requestsInFlight: $0.waitresp_cnt ?? 0)
        }
        rebalances = raw.cgrp?.rebalance_cnt
        assignedPartitions = raw.cgrp?.assignment_size
    }

    /// The fields read, named as librdkafka names them.
    // swift-format-ignore: AlwaysUseLowerCamelCase
    // The names are librdkafka's JSON keys.
    private struct Raw: Decodable {
        struct Broker: Decodable {
            struct Window: Decodable { var avg: Int64 }
            var nodeid: Int32
            var rtt: Window?
            var waitresp_cnt: Int?
        }

        struct Group: Decodable {
            var rebalance_cnt: Int?
            var assignment_size: Int?
        }

        var name: String
        var type: String
        var msg_cnt: Int?
        var replyq: Int?
        var brokers: [String: Broker]?
        var cgrp: Group?
    }
}

/// Where a Kafka client reports its statistics, and how often: set ``KafkaClientConfiguration/statistics``.
/// `report` is called on the client's poll thread and must return quickly.
public struct KafkaStatisticsReporting: Sendable {
    public var interval: Duration
    public var report: @Sendable (KafkaStatistics) -> Void

    public init(interval: Duration, report: @escaping @Sendable (KafkaStatistics) -> Void) {
        self.interval = interval
        self.report = report
    }
}

/// librdkafka's statistics callback: the JSON is read here and freed by librdkafka (return 0).
let librdkafkaStatisticsCallback:
    @convention(c) (OpaquePointer?, UnsafeMutablePointer<CChar>?, Int, UnsafeMutableRawPointer?) -> Int32 = {
        _, json, length, opaque in
        guard let json, let opaque else { return 0 }
        let context = Unmanaged<ClientContext>.fromOpaque(opaque).takeUnretainedValue()
        guard let statistics = context.statistics else { return 0 }
        let bytes = UnsafeRawBufferPointer(start: json, count: length)
        if let figures = KafkaStatistics(json: Array(bytes)) {
            statistics.report(figures)
        } else {
            context.logger.debug("librdkafka's statistics could not be read")
        }
        return 0
    }

extension NativeConfiguration {
    /// Asks librdkafka for statistics every `statistics.interval`, delivered to `context`'s reporter.
    func installStatistics(_ statistics: KafkaStatisticsReporting?, into context: ClientContext) throws {
        guard let statistics else { return }
        try set("statistics.interval.ms", String(max(1, statistics.interval.librdkafkaMilliseconds)))
        context.statistics = statistics
        rd_kafka_conf_set_stats_cb(pointer, librdkafkaStatisticsCallback)
    }
}
