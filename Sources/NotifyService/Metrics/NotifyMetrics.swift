import CoreMetrics
import Metrics
import NotifyBuild
import NotifyCore
import NotifyKafka
import Prometheus
import Synchronization

/// The metrics of one process: a Prometheus registry holding the families of ``MetricName``, each with
/// its help text, and the helpers that record them; `/metrics` adds the process's own figures and its
/// Kafka clients' statistics at each scrape. Cheap to copy; all copies share the registry.
public struct NotifyMetrics: Sendable {
    /// The registry `/metrics` exposes.
    public let registry: PrometheusCollectorRegistry
    /// A swift-metrics factory writing into ``registry``, for libraries that record through swift-metrics.
    public let factory: PrometheusMetricsFactory
    /// The latest statistics of each Kafka client of the process.
    let kafkaClients: KafkaStatisticsBoard
    /// The parts of notify this process runs, which decide the families it exports.
    private let sources = ExportedSources()
    private let latencyBuckets: [Duration] = [
        .microseconds(500), .milliseconds(1), .milliseconds(2), .milliseconds(5), .milliseconds(10),
        .milliseconds(25), .milliseconds(50), .milliseconds(100), .milliseconds(250), .milliseconds(500),
        .seconds(1), .milliseconds(2500), .seconds(5),
    ]

    /// - Parameter kafkaStatisticsInterval: how often each Kafka client reports its statistics
    ///   (librdkafka `statistics.interval.ms`) when it is made with ``kafkaStatistics``.
    public init(kafkaStatisticsInterval: Duration = .seconds(10)) {
        registry = PrometheusCollectorRegistry()
        factory = PrometheusMetricsFactory(registry: registry)
        kafkaClients = KafkaStatisticsBoard(interval: kafkaStatisticsInterval)
        gauge(MetricName.buildInfo, [("version", NotifyBuild.version), ("commit", NotifyBuild.commit)]).set(1.0)
    }

    /// Makes this registry the process-wide swift-metrics backend, so metrics of libraries that use
    /// swift-metrics appear on `/metrics` too. Call once per process, before any library records.
    public func bootstrapMetricsSystem() {
        MetricsSystem.bootstrap(factory)
    }

    /// What Kafka clients made with it report their statistics to (``KafkaClientConfiguration/statistics``).
    public var kafkaStatistics: KafkaStatisticsReporting {
        let board = kafkaClients
        return KafkaStatisticsReporting(interval: board.interval) { board.update($0) }
    }

    /// The Prometheus text exposition: every family this process exports, each with `# HELP` and
    /// `# TYPE` (also a family with no series yet), the process's figures and its Kafka clients' statistics.
    public func exposition() -> String {
        var text = ExpositionText(registry.emitToString())
        text.append(ProcessFigures.read())
        text.append(kafkaClients.samples())
        let exported = sources.current
        for family in MetricName.catalogue where exported.contains(family.source) {
            text.declareIfAbsent(family)
        }
        return text.text
    }

    // MARK: Series that exist from the start

    /// Starts the series of the stages at zero: per stage, per topic it reads (dead letters), per
    /// suppression reason, and the identity waits.
    /// - Parameter stages: each stage run, with the topics it reads.
    public func startPipelineSeries(stages: [(name: String, topics: [String])]) {
        sources.insert(.pipeline)
        for stage in stages {
            histogram(MetricName.processingLatency, [("stage", stage.name)])
            counter(MetricName.eventTimeForced, [("stage", stage.name)])
            counter(MetricName.eventTimeLate, [("stage", stage.name)])
            histogram(MetricName.eventTimeWait, [("stage", stage.name)])
            counter(MetricName.stageBusy, [("stage", stage.name)])
            for topic in stage.topics {
                counter(MetricName.deadLetters, [("source", topic)])
                counter(MetricName.deadLettersLost, [("source", topic)])
                counter(MetricName.eventTimeReadLate, [("topic", topic)])
            }
        }
        for reason in SuppressionReason.allCases { counter(MetricName.suppressions, [("reason", reason.rawValue)]) }
        counter(MetricName.identityWaits, [])
        counter(MetricName.identityTimeouts, [])
    }

    /// Starts the series of a sink of `kind` at zero: every outcome it can report, its retries,
    /// replacements and dead letters of `commandsTopic`.
    public func startSinkSeries(kind: String, commandsTopic: String = Topic.commands) {
        sources.insert(.sink)
        for outcome in NotificationOutcome.Kind.allCases where outcome != .attempting {
            counter(MetricName.sinkOutcomes, [("kind", kind), ("outcome", outcome.rawValue)])
        }
        counter(MetricName.retries, [("kind", kind)])
        counter(MetricName.sinkReplacements, [("kind", kind)])
        counter(MetricName.deadLetters, [("source", commandsTopic)])
    }

    /// Starts the in-app gateway's connection gauge at zero.
    public func startInAppGatewaySeries() {
        sources.insert(.inAppGateway)
        gauge(MetricName.inAppConnections, []).set(0.0)
    }

    // MARK: Recording

    public func recordConsumed(topic: String, count: Int = 1) {
        counter(MetricName.recordsConsumed, [("topic", topic)]).increment(by: Int64(count))
    }

    public func recordProduced(topic: String, count: Int = 1) {
        counter(MetricName.recordsProduced, [("topic", topic)]).increment(by: Int64(count))
    }

    /// Records the latency of `records` records of a stage (`fanout`, `route`) that took `duration` each.
    public func recordProcessingLatency(stage: String, records: Int = 1, _ duration: Duration) {
        let histogram = histogram(MetricName.processingLatency, [("stage", stage)])
        for _ in 0..<records { histogram.record(duration) }
    }

    public func setConsumerLag(topic: String, partition: Int32, lag: Int64) {
        gauge(MetricName.consumerLag, [("topic", topic), ("partition", String(partition))]).set(Double(lag))
    }

    public func recordSuppression(reason: SuppressionReason) {
        counter(MetricName.suppressions, [("reason", reason.rawValue)]).increment()
    }

    public func recordIdentityWaits(_ count: Int) {
        counter(MetricName.identityWaits, []).increment(by: Int64(count))
    }

    public func recordIdentityTimeouts(_ count: Int) {
        counter(MetricName.identityTimeouts, []).increment(by: Int64(count))
    }

    public func recordEventTimeForced(stage: String, count: Int) {
        counter(MetricName.eventTimeForced, [("stage", stage)]).increment(by: Int64(count))
    }

    /// Records that a stage folded `count` records after one that comes later in event-time order.
    public func recordEventTimeLate(stage: String, count: Int) {
        counter(MetricName.eventTimeLate, [("stage", stage)]).increment(by: Int64(count))
    }

    /// Records that a stage read `count` records of `topic` after it had let records go past their time.
    public func recordReadLate(topic: String, count: Int) {
        counter(MetricName.eventTimeReadLate, [("topic", topic)]).increment(by: Int64(count))
    }

    /// Records how long each of the records a stage folded waited in its event-time merge.
    public func recordEventTimeWaits(stage: String, _ waits: [Duration]) {
        let histogram = histogram(MetricName.eventTimeWait, [("stage", stage)])
        for wait in waits { histogram.record(wait) }
    }

    public func recordStageBusy(stage: String, _ duration: Duration) {
        counter(MetricName.stageBusy, [("stage", stage)]).increment(by: duration.seconds)
    }

    public func recordMisplaced(topic: String, count: Int) {
        counter(MetricName.misplacedRecords, [("topic", topic)]).increment(by: Int64(count))
    }

    /// A record of `source` was sent to the dead-letter topic.
    public func recordDeadLetter(source: String) {
        counter(MetricName.deadLetters, [("source", source)]).increment()
    }

    /// A dead letter from `source` could not be written and was given up.
    public func recordDeadLetterLost(source: String) {
        counter(MetricName.deadLettersLost, [("source", source)]).increment()
    }

    public func recordSinkOutcome(kind: String, outcome: NotificationOutcome.Kind) {
        counter(MetricName.sinkOutcomes, [("kind", kind), ("outcome", outcome.rawValue)]).increment()
    }

    public func recordRetry(kind: String) {
        counter(MetricName.retries, [("kind", kind)]).increment()
    }

    /// A command went out again as a replacement of an attempt that was never reported.
    public func recordReplacement(kind: String) {
        counter(MetricName.sinkReplacements, [("kind", kind)]).increment()
    }

    public func setInAppConnections(_ count: Int) {
        gauge(MetricName.inAppConnections, []).set(Int64(count))
    }

    // MARK: Families of the registry, with their help text

    @discardableResult
    private func counter(_ name: String, _ labels: [(String, String)]) -> Prometheus.Counter {
        registry.makeCounter(descriptor: Self.descriptor(name), labels: labels)
    }

    private func gauge(_ name: String, _ labels: [(String, String)]) -> Prometheus.Gauge {
        registry.makeGauge(descriptor: Self.descriptor(name), labels: labels)
    }

    @discardableResult
    private func histogram(_ name: String, _ labels: [(String, String)]) -> DurationHistogram {
        registry.makeDurationHistogram(descriptor: Self.descriptor(name), labels: labels, buckets: latencyBuckets)
    }

    /// The family `name` of ``MetricName`` as the registry takes it: its whole name and its help text.
    private static func descriptor(_ name: String) -> MetricNameDescriptor {
        MetricNameDescriptor(metricName: name, unitName: "", helpText: MetricName.family(named: name).help)
    }
}

/// The parts of notify a process runs (``MetricSource``), shared by the copies of its ``NotifyMetrics``.
private final class ExportedSources: Sendable {
    private let sources = Mutex<Set<MetricSource>>([.everyProcess])

    var current: Set<MetricSource> { sources.withLock { $0 } }

    func insert(_ source: MetricSource) {
        sources.withLock { _ = $0.insert(source) }
    }
}
