import NotifyCore
import NotifyKafka
import Synchronization

/// The latest statistics of each Kafka client of the process, as gauges. A client that has not
/// reported for three intervals (closed: a consumer that restored a changelog, a sink's follower)
/// is dropped, so its series go away with it.
final class KafkaStatisticsBoard: Sendable {
    let interval: Duration
    private let latest = Mutex<[String: (statistics: KafkaStatistics, at: ContinuousClock.Instant)]>([:])

    init(interval: Duration) {
        self.interval = interval
    }

    func update(_ statistics: KafkaStatistics) {
        latest.withLock { $0[statistics.client] = (statistics, .now) }
    }

    /// The gauges of every client that reported within the last three intervals; families with no
    /// samples (no consumer, no statistics yet) are declared by the exposition.
    func samples() -> [FamilySamples] {
        let cutoff = ContinuousClock.now - interval * 3
        let clients = latest.withLock { latest in
            latest = latest.filter { $0.value.at >= cutoff }
            return latest.values.map(\.statistics).sorted { $0.client < $1.client }
        }
        var roundTrip = FamilySamples(MetricName.kafkaBrokerRoundTrip)
        var inFlight = FamilySamples(MetricName.kafkaBrokerRequestsInFlight)
        var producerQueue = FamilySamples(MetricName.kafkaProducerQueue)
        var replyQueue = FamilySamples(MetricName.kafkaReplyQueue)
        var rebalances = FamilySamples(MetricName.kafkaRebalances)
        var assigned = FamilySamples(MetricName.kafkaAssignedPartitions)
        for client in clients {
            let name = [("client", client.client)]
            for broker in client.brokers {
                let labels = name + [("broker", String(broker.nodeId))]
                roundTrip.samples.append((labels, broker.roundTripAverage.seconds))
                inFlight.samples.append((labels, Double(broker.requestsInFlight)))
            }
            if client.type == "producer" { producerQueue.samples.append((name, Double(client.queuedMessages))) }
            replyQueue.samples.append((name, Double(client.replyQueue)))
            if let count = client.rebalances { rebalances.samples.append((name, Double(count))) }
            if let count = client.assignedPartitions { assigned.samples.append((name, Double(count))) }
        }
        return [roundTrip, inFlight, producerQueue, replyQueue, rebalances, assigned]
    }
}
