import CoreMetrics
import Metrics
import Prometheus

/// The names of the metrics every `notify` process exports on `/metrics`, with their labels and meaning.
/// `docs/operations.md` lists them; a test keeps the list and the document in step.
public enum MetricName {
    public static let recordsConsumed = "notify_records_consumed_total"
    public static let recordsProduced = "notify_records_produced_total"
    public static let processingLatency = "notify_processing_latency_seconds"
    public static let consumerLag = "notify_consumer_lag"
    public static let suppressions = "notify_suppressions_total"
    public static let identityWaits = "notify_identity_waits_total"
    public static let identityTimeouts = "notify_identity_timeouts_total"
    public static let deadLetters = "notify_dlq_records_total"
    public static let eventTimeForced = "notify_event_time_forced_total"
    public static let misplacedRecords = "notify_misplaced_records_total"
    public static let deadLettersLost = "notify_dlq_write_failures_total"
    public static let sinkOutcomes = "notify_sink_outcomes_total"
    public static let retries = "notify_retries_total"
    public static let sinkReplacements = "notify_sink_replacements_total"
    public static let inAppConnections = "notify_inapp_connections"

    /// (name, type, labels, meaning) of every metric above, in the order the runbook lists them.
    public static let catalogue: [(name: String, type: String, labels: [String], meaning: String)] = [
        (recordsConsumed, "counter", ["topic"], "Records read from Kafka."),
        (recordsProduced, "counter", ["topic"], "Records written to Kafka and acknowledged."),
        (processingLatency, "histogram", ["stage"], "From a record's arrival to its outputs being handed to the producer, per stage or sink."),
        (consumerLag, "gauge", ["topic", "partition"], "High watermark minus the committed offset, per assigned partition."),
        (suppressions, "counter", ["reason"], "Deliveries decided against (own message, muted, foreground talk room, ...)."),
        (identityWaits, "counter", [], "Messages held because the sender's identity was not yet known."),
        (identityTimeouts, "counter", [], "Held messages released without the identity (`identityResolved: false`)."),
        (eventTimeForced, "counter", ["stage"], "Records folded because they waited `pipeline.maxEventTimeWait`, not because every input had passed their event time: their order is not guaranteed."),
        (misplacedRecords, "counter", ["topic"], "Input records a producer put in another partition than murmur2 of their key gives, forwarded to the stage's repartition topic."),
        (deadLetters, "counter", ["reason", "source"], "Records sent to `notify.dlq`; `reason` is a short code, `source` the input topic."),
        (deadLettersLost, "counter", ["source"], "Dead letters given up after three failed writes (the last without the value); each is logged with its source, and its partition moved on."),
        (sinkOutcomes, "counter", ["kind", "outcome", "reason"], "Sink results by sink kind, outcome and reason (`none` when delivered)."),
        (retries, "counter", ["kind", "reason"], "Delivery attempts repeated after a retryable failure."),
        (sinkReplacements, "counter", ["kind"], "Commands sent again, with the platform's replacement key, because an earlier attempt was recorded but never reported (a sink crashed or lost its partition in between)."),
        (inAppConnections, "gauge", [], "WebSocket clients connected to the in-app gateway."),
    ]
}

/// The metrics of one process: a Prometheus registry and the helpers that record the named metrics
/// through swift-metrics. Cheap to copy; all copies share the registry.
public struct NotifyMetrics: Sendable {
    /// The registry `/metrics` exposes.
    public let registry: PrometheusCollectorRegistry
    /// A swift-metrics factory writing into ``registry``.
    public let factory: PrometheusMetricsFactory

    public init() {
        registry = PrometheusCollectorRegistry()
        var factory = PrometheusMetricsFactory(registry: registry)
        factory.durationHistogramBuckets[MetricName.processingLatency] = [
            .microseconds(500), .milliseconds(1), .milliseconds(2), .milliseconds(5), .milliseconds(10),
            .milliseconds(25), .milliseconds(50), .milliseconds(100), .milliseconds(250), .milliseconds(500),
            .seconds(1), .milliseconds(2500), .seconds(5),
        ]
        self.factory = factory
    }

    /// Makes this registry the process-wide swift-metrics backend, so metrics of libraries that use
    /// swift-metrics appear on `/metrics` too. Call once per process, before any library records.
    public func bootstrapMetricsSystem() {
        MetricsSystem.bootstrap(factory)
    }

    /// The Prometheus text exposition of every metric.
    public func exposition() -> String {
        registry.emitToString()
    }

    public func recordConsumed(topic: String, count: Int = 1) {
        Counter(label: MetricName.recordsConsumed, dimensions: [("topic", topic)], factory: factory).increment(by: count)
    }

    public func recordProduced(topic: String, count: Int = 1) {
        Counter(label: MetricName.recordsProduced, dimensions: [("topic", topic)], factory: factory).increment(by: count)
    }

    /// Records how long a stage (`fanout`, `route`) or a sink (`sink-apns`, ...) took for one record or batch.
    public func recordProcessingLatency(stage: String, _ duration: Duration) {
        Timer(label: MetricName.processingLatency, dimensions: [("stage", stage)], factory: factory).recordInterval(duration)
    }

    public func setConsumerLag(topic: String, partition: Int32, lag: Int64) {
        Gauge(label: MetricName.consumerLag, dimensions: [("topic", topic), ("partition", String(partition))], factory: factory)
            .record(lag)
    }

    public func recordSuppression(reason: String) {
        Counter(label: MetricName.suppressions, dimensions: [("reason", reason)], factory: factory).increment()
    }

    public func recordIdentityWait() {
        Counter(label: MetricName.identityWaits, factory: factory).increment()
    }

    public func recordEventTimeForced(stage: String, count: Int) {
        Counter(label: MetricName.eventTimeForced, dimensions: [("stage", stage)], factory: factory).increment(by: count)
    }

    public func recordMisplaced(topic: String, count: Int) {
        Counter(label: MetricName.misplacedRecords, dimensions: [("topic", topic)], factory: factory).increment(by: count)
    }

    public func recordIdentityTimeout() {
        Counter(label: MetricName.identityTimeouts, factory: factory).increment()
    }

    /// `reason` must be a short code (bounded set), not a free-text description.
    public func recordDeadLetter(reason: String, source: String) {
        Counter(label: MetricName.deadLetters, dimensions: [("reason", reason), ("source", source)], factory: factory).increment()
    }

    /// A dead letter from `source` could not be written and was given up.
    public func recordDeadLetterLost(source: String) {
        Counter(label: MetricName.deadLettersLost, dimensions: [("source", source)], factory: factory).increment()
    }

    public func recordSinkOutcome(kind: String, outcome: String, reason: String?) {
        Counter(label: MetricName.sinkOutcomes,
                dimensions: [("kind", kind), ("outcome", outcome), ("reason", reason ?? "none")], factory: factory).increment()
    }

    public func recordRetry(kind: String, reason: String) {
        Counter(label: MetricName.retries, dimensions: [("kind", kind), ("reason", reason)], factory: factory).increment()
    }

    /// A command went out again as a replacement of an attempt that was never reported.
    public func recordReplacement(kind: String) {
        Counter(label: MetricName.sinkReplacements, dimensions: [("kind", kind)], factory: factory).increment()
    }

    public func setInAppConnections(_ count: Int) {
        Gauge(label: MetricName.inAppConnections, factory: factory).record(count)
    }
}

extension Timer {
    /// Records a `Duration` (swift-metrics takes nanoseconds).
    func recordInterval(_ duration: Duration) {
        let (seconds, attoseconds) = duration.components
        recordNanoseconds(seconds * 1_000_000_000 + attoseconds / 1_000_000_000)
    }
}
