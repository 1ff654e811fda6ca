import Logging

/// Asks the Kafka cluster for a topic's metadata every `interval`, for the probes of the process
/// (`/readyz` fails while the cluster stays unreachable, `/healthz` when the checks stop finishing).
/// Each check gives up after `interval`, so one finishes, reachable or not, at least that often.
public struct ClusterWatch: Sendable {
    public let client: KafkaClientConfiguration
    /// A topic the process uses (any topic answers; a missing one is an answer too).
    public let topic: String
    public let interval: Duration

    public init(client: KafkaClientConfiguration, topic: String, interval: Duration = .seconds(2)) {
        self.client = client
        self.topic = topic
        self.interval = interval
    }

    /// Checks until cancelled; `report` hears whether each check reached the cluster.
    public func run(logger: Logger, report: @escaping @Sendable (_ reachable: Bool) -> Void) async throws {
        let admin = try KafkaAdmin(configuration: client, logger: logger)
        let timeout = Int32(clamping: max(100, interval.librdkafkaMilliseconds))
        var wasReachable = true
        while !Task.isCancelled {
            let started = ContinuousClock.now
            let reachable: Bool
            do {
                _ = try await admin.metadata(of: topic, timeoutMilliseconds: timeout)
                reachable = true
            } catch {
                reachable = false
            }
            report(reachable)
            if reachable != wasReachable {
                if reachable {
                    logger.notice("The Kafka cluster answers again")
                } else {
                    logger.warning("The Kafka cluster did not answer a metadata request within \(interval)")
                }
                wasReachable = reachable
            }
            try await Task.sleep(until: started.advanced(by: interval), clock: .continuous)
        }
    }
}
