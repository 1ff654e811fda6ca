/// The type of a metric family, as `# TYPE` names it.
public enum MetricType: String, Sendable {
    case counter, gauge, histogram
}

/// What part of notify exports a metric family: every process, or the processes that run a part.
public enum MetricSource: String, Sendable, CaseIterable {
    /// Every long-running process (`notify pipeline`, `notify sink`, `notify dev`).
    case everyProcess = "every process"
    /// Processes that run the pipeline's stages (`notify pipeline`, `notify dev`).
    case pipeline
    /// Processes that run a sink (`notify sink`, `notify dev`).
    case sink
    /// Processes that run the in-app WebSocket gateway (`notify sink --kind inapp`, `notify dev`).
    case inAppGateway = "in-app gateway"
}

/// One metric family: its name, type, label names, help text (its `# HELP` line) and who exports it.
public struct MetricFamily: Sendable {
    public let name: String
    public let type: MetricType
    public let labels: [String]
    public let help: String
    public let source: MetricSource
}

/// The names of the metrics `notify` processes export on `/metrics`. `docs/operations.md` lists
/// them; tests keep the list, the document, the exposition and `Deploy/prometheus/` in step.
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
    public static let eventTimeWait = "notify_event_time_wait_seconds"
    public static let eventTimeLate = "notify_event_time_late_total"
    public static let eventTimeReadLate = "notify_event_time_read_late_total"
    public static let stageBusy = "notify_stage_busy_seconds_total"
    public static let misplacedRecords = "notify_misplaced_records_total"
    public static let deadLettersLost = "notify_dlq_write_failures_total"
    public static let sinkOutcomes = "notify_sink_outcomes_total"
    public static let retries = "notify_retries_total"
    public static let sinkReplacements = "notify_sink_replacements_total"
    public static let inAppConnections = "notify_inapp_connections"
    public static let buildInfo = "notify_build_info"
    public static let processCPU = "process_cpu_seconds_total"
    public static let processResidentMemory = "process_resident_memory_bytes"
    public static let processVirtualMemory = "process_virtual_memory_bytes"
    public static let processOpenFileDescriptors = "process_open_fds"
    public static let processMaxFileDescriptors = "process_max_fds"
    public static let processStartTime = "process_start_time_seconds"
    public static let kafkaBrokerRoundTrip = "notify_kafka_broker_rtt_seconds"
    public static let kafkaBrokerRequestsInFlight = "notify_kafka_broker_requests_in_flight"
    public static let kafkaProducerQueue = "notify_kafka_producer_queue_messages"
    public static let kafkaReplyQueue = "notify_kafka_reply_queue_events"
    public static let kafkaRebalances = "notify_kafka_consumer_rebalances"
    public static let kafkaAssignedPartitions = "notify_kafka_consumer_assigned_partitions"

    /// Every family, in the order the runbook lists them.
    public static let catalogue: [MetricFamily] = [
        family(recordsConsumed, .counter, ["topic"], .pipeline, "Records read from Kafka by the stages."),
        family(
            recordsProduced, .counter, ["topic"], .pipeline,
            "Records the stages wrote to Kafka and the broker acknowledged."),
        family(
            processingLatency, .histogram, ["stage"], .pipeline,
            """
            Per record read by a stage: from the arrival of its batch to the broker's acknowledgement of what \
            the batch made (a record the event-time merge holds back is counted with its batch, not when folded).
            """),
        family(
            consumerLag, .gauge, ["topic", "partition"], .pipeline,
            "High watermark minus the committed offset, per partition a stage holds."),
        family(
            suppressions, .counter, ["reason"], .pipeline,
            "Deliveries decided against, by reason (own-message, muted, foreground-in-conversation, ...)."),
        family(
            identityWaits, .counter, [], .pipeline, "Messages held because the sender's identity was not yet known."),
        family(
            identityTimeouts, .counter, [], .pipeline,
            "Held messages released without the sender's identity (identityResolved: false)."),
        family(
            eventTimeForced, .counter, ["stage"], .pipeline,
            """
            Records folded because they waited pipeline.maxEventTimeWait, not because every input had passed \
            their event time: their order is not guaranteed.
            """),
        family(
            eventTimeLate, .counter, ["stage"], .pipeline,
            """
            Records folded after a record that comes later in event-time order: read more than pipeline.lateness \
            after the stage's event clock passed their at, or after a record the maximum wait let go, they were \
            folded out of the order notify render folds them in.
            """),
        family(
            eventTimeReadLate, .counter, ["topic"], .pipeline,
            """
            Records a stage read after it had let records go past their at, as if nothing earlier could still \
            come: later than pipeline.lateness allows. By the topic they came from: a producer's, or notify.fanout \
            when stage 1 was behind the event time of stage 2's other inputs. notify_event_time_late_total counts \
            those folded out of notify render's order.
            """),
        family(
            eventTimeWait, .histogram, ["stage"], .pipeline,
            """
            Per record a stage folded: how long its event-time merge held it, from its read to its fold (in \
            stage 1 about pipeline.lateness while its inputs are quiet).
            """),
        family(
            stageBusy, .counter, ["stage"], .pipeline,
            """
            Wall-clock seconds the stage's actor worked: folding the batches it read and the records its event-time merge \
            let go, moving clocks on, computing marks. Each stage of an instance folds on one actor, so its rate \
            is the share of a core the stage keeps: near 1, the stage is saturated in this instance.
            """),
        family(
            misplacedRecords, .counter, ["topic"], .pipeline,
            """
            Input records a producer put in another partition than murmur2 of their key gives, forwarded to the \
            stage's repartition topic.
            """),
        family(
            deadLetters, .counter, ["source"], .everyProcess,
            """
            Records sent to notify.dlq, by the topic they came from (the reason is in each record's notify-reason \
            header and in the log).
            """),
        family(
            deadLettersLost, .counter, ["source"], .pipeline,
            """
            Dead letters given up after three failed writes (the last without the value); each is logged with \
            its source.
            """),
        family(
            sinkOutcomes, .counter, ["kind", "outcome"], .sink,
            """
            Sink results by sink kind and outcome (delivered, expired, token-invalid, failed, undeliverable-local); \
            the reason is in the outcome record.
            """),
        family(
            retries, .counter, ["kind"], .sink,
            "Delivery attempts repeated after a retryable failure (429, 5xx, timeouts)."),
        family(
            sinkReplacements, .counter, ["kind"], .sink,
            """
            Commands sent again, with the platform's replacement key, because an earlier attempt was recorded but \
            never reported.
            """),
        family(inAppConnections, .gauge, [], .inAppGateway, "WebSocket clients connected to the in-app gateway."),
        family(
            buildInfo, .gauge, ["version", "commit"], .everyProcess,
            "Always 1; the labels name the version and the git commit of the executable."),
        family(
            processCPU, .counter, [], .everyProcess, "CPU time the process used, user and system (/proc/self/stat)."),
        family(processResidentMemory, .gauge, [], .everyProcess, "Resident memory of the process (/proc/self/stat)."),
        family(processVirtualMemory, .gauge, [], .everyProcess, "Virtual memory of the process (/proc/self/stat)."),
        family(
            processOpenFileDescriptors, .gauge, [], .everyProcess,
            "File descriptors the process has open (/proc/self/fd)."),
        family(
            processMaxFileDescriptors, .gauge, [], .everyProcess,
            "The process's limit of open file descriptors (RLIMIT_NOFILE)."),
        family(
            processStartTime, .gauge, [], .everyProcess, "When the process started, in seconds since the Unix epoch."),
        family(
            kafkaBrokerRoundTrip, .gauge, ["client", "broker"], .everyProcess,
            """
            Average round-trip time of a Kafka client's requests to a broker over the last statistics interval \
            (librdkafka rtt.avg; 0 when there were none).
            """),
        family(
            kafkaBrokerRequestsInFlight, .gauge, ["client", "broker"], .everyProcess,
            "Requests a Kafka client sent to a broker and awaits the answer of (librdkafka waitresp_cnt)."),
        family(
            kafkaProducerQueue, .gauge, ["client"], .everyProcess,
            "Messages in a Kafka producer's queues, not yet acknowledged by a broker (librdkafka msg_cnt)."),
        family(
            kafkaReplyQueue, .gauge, ["client"], .everyProcess,
            "Events (delivery reports, callbacks) waiting in a Kafka client's queue for its poll loop (librdkafka replyq)."
        ),
        family(
            kafkaRebalances, .gauge, ["client"], .everyProcess,
            "Rebalances a Kafka consumer has gone through since it started (librdkafka cgrp.rebalance_cnt)."),
        family(
            kafkaAssignedPartitions, .gauge, ["client"], .everyProcess,
            "Partitions assigned to a Kafka consumer (librdkafka cgrp.assignment_size)."),
    ]

    /// The family named `name`; every name above has one.
    static func family(named name: String) -> MetricFamily {
        familiesByName[name]!
    }

    private static let familiesByName = Dictionary(uniqueKeysWithValues: catalogue.map { ($0.name, $0) })

    private static func family(
        _ name: String, _ type: MetricType, _ labels: [String], _ source: MetricSource, _ help: String
    ) -> MetricFamily {
        MetricFamily(name: name, type: type, labels: labels, help: help, source: source)
    }
}
