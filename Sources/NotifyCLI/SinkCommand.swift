import ArgumentParser
import Foundation
import Logging
import NotifyCore
import NotifyKafka
import NotifyService
import NotifySinks
import ServiceLifecycle
import UnixSignals

/// `notify sink --kind apns|fcm|inapp|webhook|jsonl`: runs one sink as a member of the consumer
/// group `notify-sink-<kind>` on notify.commands, until SIGTERM or SIGINT (which finish the
/// attempts under way, report them and commit before leaving).
struct SinkCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "sink",
        abstract:
            "Deliver notify.commands to devices (apns, fcm, inapp, webhook, jsonl) and report to notify.outcomes.",
        discussion: """
            Secrets come from files or the environment only: --key-file or NOTIFY_APNS_KEY, \
            --service-account or NOTIFY_FCM_SERVICE_ACCOUNT, --secret-file or NOTIFY_INAPP_SECRET / \
            NOTIFY_WEBHOOK_SECRET, and --secrets-dir (inapp: one secret per kid; webhook: one per file, \
            each signs). TLS verification is always on; --ca-file trusts a private CA.
            """
    )

    @OptionGroup var kafka: KafkaOptions
    @OptionGroup var service: ServiceOptions

    @Option(help: "The sink kind: apns, fcm, inapp, webhook or jsonl.")
    var kind: SinkKind

    @Option(help: "The consumer group (default notify-sink-<kind>).")
    var group: String?

    @Option(help: "Delivery attempts under way at once (sink.concurrency; default 512).")
    var maxInFlight: Int?

    @Option(help: "Attempts per command before it is dead-lettered (sink.maxAttempts; default 8).")
    var maxAttempts: Int?

    @OptionGroup var shared: SharedSinkOptions
    @OptionGroup var kinds: SinkKindOptionGroups

    func run() async throws {
        let options = kinds.options(for: kind)
        try refuseFlagsOfOtherKinds()
        let settings = try await loadSettings()
        settings.startLogging()
        let logger = settings.logger(label: "notify.sink.\(kind.rawValue)")
        let traceExport = try TraceExport.bootstrapForCommand(
            serviceName: "notify-sink-\(kind.rawValue)", logger: logger)
        try await service.requireKafka(settings, kafka: kafka)
        let shell = ServiceShell(settings: settings, logger: logger, traceExport: traceExport)
        shell.metrics.bootstrapMetricsSystem()
        shell.metrics.startSinkSeries(kind: kind.rawValue)
        var observer = SinkObserver.counting(into: shell.metrics, kind: kind.rawValue)
        let count = observer.onOutcome
        observer.onOutcome = { outcome in
            count(outcome)
            shell.console.publish(.outcome(outcome))
        }
        observer.onReady = {
            shell.status.markReady()
            shell.status.partitionsAssigned(consumer: "the sink's consumer")
        }
        observer.onClusterCheck = { shell.status.clusterCheck(reachable: $0) }
        observer.onPartitionsRevoked = {
            shell.status.partitionsRevoked(consumer: "the sink's consumer", remaining: $0)
        }
        let configuration = runtimeConfiguration(settings: settings, metrics: shell.metrics, observer: observer)
        let context = SinkKindContext(kind: kind, settings: settings, logger: logger, metrics: shell.metrics)
        try await serve(options, context: context, configuration: configuration, shell: shell)
    }

    /// Refuses a flag that the kind run does not read (another kind's own flag, or a shared flag of other
    /// kinds) with a message naming the kinds that read it, instead of ignoring it.
    func refuseFlagsOfOtherKinds() throws {
        guard shared.secretsDir == nil || kinds.options(for: kind).readsSecretsDirectory else {
            throw ValidationError("--secrets-dir is for --kind \(kinds.kindsReadingSecretsDirectory).")
        }
        for (flag, readers) in shared.givenFlags where !readers.contains(kind) {
            throw ValidationError("\(flag) is for --kind \(readers.map(\.rawValue).joined(separator: " or ")).")
        }
        for other in SinkKind.allCases where other != kind {
            for given in kinds.options(for: other).settingFlags where given.value != nil {
                throw ValidationError("\(given.flag) is for --kind \(other.rawValue).")
            }
        }
    }

    /// The settings: this command's flags over `--set`, `--config`, the environment and the defaults.
    func loadSettings(environment: [String: String] = ProcessInfo.processInfo.environment) async throws
        -> NotifySettings
    {
        try await service.loadSettings(
            kafka: kafka,
            commandFlags: [
                ("sink.\(kind.rawValue).secretsDirectory", "--secrets-dir", shared.secretsDir),
                ("sink.concurrency", "--max-in-flight", maxInFlight.map { String($0) }),
                ("sink.maxAttempts", "--max-attempts", maxAttempts.map { String($0) }),
            ] + shared.settingFlags(for: kind) + kinds.options(for: kind).settingFlags, environment: environment)
    }

    /// How the sink's runtime runs: Kafka client and group from `settings` and these flags, retries
    /// and concurrency from `settings` (``SinkRuntimeConfiguration/init(settings:client:groupId:observer:)``).
    func runtimeConfiguration(settings: NotifySettings, metrics: NotifyMetrics, observer: SinkObserver)
        -> SinkRuntimeConfiguration
    {
        var client = KafkaClientConfiguration(
            bootstrapServers: settings.kafka.bootstrap, clientId: "notify-sink-\(kind.rawValue)",
            properties: settings.kafka.properties)
        client.statistics = metrics.kafkaStatistics
        return SinkRuntimeConfiguration(settings: settings, client: client, groupId: group, observer: observer)
    }

    /// Makes the kind's sink and runs its runtime, with /healthz, /readyz and /metrics, inside what
    /// the kind serves beside it, until SIGTERM or SIGINT asks it to finish.
    private func serve<Options: SinkKindOptions>(
        _ options: Options, context: SinkKindContext, configuration: SinkRuntimeConfiguration, shell: ServiceShell
    ) async throws {
        let sink = try options.makeSink(shared, context)
        try await options.serve(sink, context) {
            try await shell.run([SinkRuntime(sink: sink, configuration: configuration, logger: context.logger)]) {
                address in
                shell.logger.info("Serving /healthz, /readyz and /metrics at http://\(address)")
            }
        }
    }
}

extension SinkObserver {
    /// Counts in `metrics` what a sink of `kind` does: its outcomes, retries, replacements and dead letters.
    static func counting(into metrics: NotifyMetrics, kind: String) -> SinkObserver {
        SinkObserver(
            onOutcome: { metrics.recordSinkOutcome(kind: kind, outcome: $0.outcome) },
            onRetry: { _ in metrics.recordRetry(kind: kind) },
            onReplacement: { _ in metrics.recordReplacement(kind: kind) },
            onDeadLetter: { metrics.recordDeadLetter(source: $0) })
    }
}

extension SinkRuntimeConfiguration {
    /// A sink runtime as `settings` say (`sink.concurrency`, `sink.maxAttempts`, `sink.retryBaseDelay`,
    /// `sink.retryMaxDelay`, `sink.ledgerRestoreMargin`, `probes.checkInterval`): `notify sink` and
    /// the sinks of `notify dev` alike.
    init(settings: NotifySettings, client: KafkaClientConfiguration, groupId: String?, observer: SinkObserver) {
        self.init(
            kafka: client, groupId: groupId,
            retry: RetryPolicy(
                maxAttempts: settings.sink.maxAttempts, initialDelay: settings.sink.retryBaseDelay,
                maxDelay: settings.sink.retryMaxDelay),
            maxInFlight: settings.sink.concurrency, clusterCheckInterval: settings.probes.checkInterval,
            ledgerRestoreMargin: settings.sink.ledgerRestoreMargin, observer: observer)
    }
}
