import ArgumentParser
import Logging
import NotifyCore
import NotifyKafka
import NotifyPipeline
import NotifyService
import ServiceLifecycle

/// `notify pipeline`: the stages as a consumer-group member, with /healthz, /readyz, /metrics and the
/// console, until SIGINT or SIGTERM.
struct PipelineCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "pipeline",
        abstract: "Run the pipeline stages (fanout, route) as a member of a consumer group.",
        discussion: """
            Start as many instances as you like with the same group: partitions are split between them and \
            move on join, leave and crash. Each task restores its state from the stage's changelog topic \
            before it processes a record; /readyz answers 200 once that is done. Settings come from flags, \
            NOTIFY_* variables and --config, in that order (docs/configuration.md).
            """
    )

    @OptionGroup var kafka: KafkaOptions
    @OptionGroup var service: ServiceOptions

    @Option(help: "Consumer group; each stage joins <group>.<stage> (setting kafka.groupId, default notify).")
    var group: String?

    @Option(help: "Stages to run, comma-separated: fanout, route (setting pipeline.stages).")
    var stages: String?

    @Option(help: ArgumentHelp("The Schemas directory (setting pipeline.schemas).", valueName: "dir"))
    var schemas: String?

    @Option(
        help: ArgumentHelp(
            "Thumbnail service asked for image attachments (setting thumbnails.url; timeout thumbnails.timeout, default 0.5 s).",
            valueName: "url"))
    var thumbnailService: String?

    func run() async throws {
        let settings = try await service.loadSettings(
            kafka: kafka,
            commandFlags: [
                ("kafka.groupId", "--group", group), ("pipeline.stages", "--stages", stages),
                ("pipeline.schemas", "--schemas", schemas),
                ("thumbnails.url", "--thumbnail-service", thumbnailService),
            ])
        settings.startLogging()
        let logger = settings.logger(label: "notify.pipeline")
        let traceExport = try TraceExport.bootstrapForCommand(serviceName: "notify-pipeline", logger: logger)
        try await service.requireKafka(settings, kafka: kafka)
        let core = try settings.coreConfiguration()
        let shell = ServiceShell(
            settings: settings, logger: logger, console: ConsoleFeed(categories: core.categories),
            traceExport: traceExport)
        shell.metrics.bootstrapMetricsSystem()
        let pipeline = PipelineInstance(
            settings: try settings.pipelineSettings(core: core).reporting(to: shell.metrics), observer: .service(shell),
            logger: logger)
        try await shell.run([PipelineService(pipeline: pipeline)]) { address in
            logger.info("Serving /healthz, /readyz, /metrics and the console at http://\(address)")
        }
    }
}

/// The pipeline as a service of the lifecycle: on graceful shutdown it stops fetching, finishes
/// in-flight work, commits and leaves its groups.
struct PipelineService: Service {
    let pipeline: PipelineInstance

    func run() async throws {
        try await cancelWhenGracefulShutdown { try await pipeline.run() }
    }
}

extension PipelineObserver {
    /// Feeds the shell: readiness, metrics, the console and the log.
    static func service(_ shell: ServiceShell) -> PipelineObserver {
        PipelineObserver(
            onConsumed: { records in
                for (topic, count) in Dictionary(grouping: records, by: \.topic).mapValues(\.count) {
                    shell.metrics.recordConsumed(topic: topic, count: count)
                }
                for record in records { shell.console.publish(.consumed(record)) }
            },
            onDecisions: { decisions in
                for decision in decisions {
                    shell.metrics.recordSuppression(reason: decision.reason)
                    shell.console.publish(.decision(decision))
                    shell.logger.info("\(decision)")
                }
            },
            onProduced: { records, commands, deadLetters in
                for (topic, count) in Dictionary(grouping: records, by: \.topic).mapValues(\.count) {
                    shell.metrics.recordProduced(topic: topic, count: count)
                }
                for letter in deadLetters { shell.metrics.recordDeadLetter(source: letter.sourceTopic) }
                for command in commands {
                    shell.console.publish(.command(command))
                    shell.logger.info(
                        "command \(command.path.rawValue) to \(command.recipient.userId)/\(command.recipient.deviceId) (\(command.recipient.provider.rawValue)) message \(command.messageId ?? "-")"
                    )
                }
            },
            onReady: { shell.status.markReady() },
            onLag: { lag in
                for (partition, behind) in lag {
                    shell.metrics.setConsumerLag(topic: partition.topic, partition: partition.partition, lag: behind)
                }
            },
            onIdentityWaits: { waits, timeouts in
                shell.metrics.recordIdentityWaits(waits)
                shell.metrics.recordIdentityTimeouts(timeouts)
            },
            onProcessed: { stage, records, duration in
                shell.metrics.recordProcessingLatency(stage: stage.rawValue, records: records, duration)
            },
            onBusy: { stage, duration in shell.metrics.recordStageBusy(stage: stage.rawValue, duration) },
            onReleasedByMaximumWait: { stage, count in
                shell.metrics.recordEventTimeForced(stage: stage.rawValue, count: count)
                shell.logger.warning(
                    "\(count) record(s) of the \(stage.rawValue) stage folded after the maximum event-time wait (pipeline.maxEventTimeWait): an input or a stage-1 task did not move on"
                )
            },
            onFoldedLate: { stage, count in shell.metrics.recordEventTimeLate(stage: stage.rawValue, count: count) },
            onReadLate: { topic, count in shell.metrics.recordReadLate(topic: topic, count: count) },
            onEventTimeWaits: { stage, waits in shell.metrics.recordEventTimeWaits(stage: stage.rawValue, waits) },
            onMisplaced: { topic, count in shell.metrics.recordMisplaced(topic: topic, count: count) },
            onClusterCheck: { shell.status.clusterCheck(reachable: $0) },
            onPartitions: { stage, held in
                let consumer = "stage \(stage.rawValue)"
                if held {
                    shell.status.partitionsAssigned(consumer: consumer)
                } else {
                    shell.status.partitionsRevoked(consumer: consumer, remaining: 0)
                }
            },
            onDeadLetterLost: { letter in shell.metrics.recordDeadLetterLost(source: letter.sourceTopic) })
    }
}

extension NotifySettings {
    /// A logger at the configured level.
    func logger(label: String) -> Logger {
        var logger = Logger(label: label)
        logger.logLevel = Logger.Level(rawValue: logLevel) ?? .info
        return logger
    }

    /// The core's configuration: the Schemas' policies and categories, and the pipeline's times.
    func coreConfiguration() throws -> CoreConfiguration {
        var core: CoreConfiguration
        do {
            core = try CoreConfiguration.load(schemasDirectory: pipeline.schemasDirectory)
        } catch let error as ConfigurationError {
            throw ValidationError("\(error) (set pipeline.schemas, --schemas or NOTIFY_SCHEMAS)")
        }
        core.identityWaitMilliseconds = pipeline.identityWait.milliseconds
        core.clientStateMaxAgeMilliseconds = pipeline.clientStateMaxAge.milliseconds
        core.backgroundPushIntervalMilliseconds = pipeline.backgroundPushInterval.milliseconds
        return core
    }

    /// What the pipeline needs of the settings.
    func pipelineSettings(core: CoreConfiguration) throws -> PipelineSettings {
        let names = try pipeline.stages.map { name in
            guard let stage = StageName(rawValue: name) else {
                throw ValidationError("pipeline.stages: unknown stage \(name)")
            }
            return stage
        }
        var settings = PipelineSettings(
            client: KafkaClientConfiguration(
                bootstrapServers: kafka.bootstrap, clientId: kafka.clientId, properties: kafka.properties),
            groupId: kafka.groupId ?? "notify", stages: Set(names), core: core, saveInterval: pipeline.saveInterval,
            thumbnails: thumbnails.url.map {
                ThumbnailSettings(url: $0, timeout: thumbnails.timeout, backlogLimit: Int64(thumbnails.backlogLimit))
            },
            lateness: pipeline.lateness, maximumEventTimeWait: pipeline.maxEventTimeWait)
        settings.clusterCheckInterval = probes.checkInterval
        return settings
    }
}

extension PipelineSettings {
    /// These settings with the Kafka clients reporting their statistics to `metrics`, whose series of
    /// the stages start at zero.
    func reporting(to metrics: NotifyMetrics) -> PipelineSettings {
        var settings = self
        settings.client.statistics = metrics.kafkaStatistics
        metrics.startPipelineSeries(
            stages: stages.sorted { $0.rawValue < $1.rawValue }.map { ($0.rawValue, $0.topicsRead) })
        return settings
    }
}
