import ArgumentParser
import Foundation
import NotifyKafka
import Logging
import NotifyCore
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
        abstract: "Deliver notify.commands to devices (apns, fcm, inapp, webhook, jsonl) and report to notify.outcomes.",
        discussion: """
            Secrets come from files or the environment only: --key-file or NOTIFY_APNS_KEY, \
            --service-account or NOTIFY_FCM_SERVICE_ACCOUNT, --secret-file or NOTIFY_INAPP_SECRET / \
            NOTIFY_WEBHOOK_SECRET, and --secrets-dir (inapp: one secret per kid; webhook: one per file, \
            each signs). TLS verification is always on; --ca-file trusts a private CA.
            """
    )

    enum Kind: String, ExpressibleByArgument, CaseIterable {
        case apns, fcm, inapp, webhook, jsonl
    }

    @OptionGroup var kafka: KafkaOptions
    @OptionGroup var service: ServiceOptions

    @Option(help: "The sink kind: apns, fcm, inapp, webhook or jsonl.")
    var kind: Kind

    @Option(help: "The consumer group (default notify-sink-<kind>).")
    var group: String?

    @Option(help: "Delivery attempts under way at once.")
    var maxInFlight = 512

    @Option(help: "Attempts per command before it is dead-lettered.")
    var maxAttempts = 8

    @Option(help: "A PEM file of CA certificates to trust instead of the system's (private CAs, tests).")
    var caFile: String?

    @Option(help: "apns, fcm: the service's base URL (default the production endpoint).")
    var endpoint: String?

    @Option(help: "apns: HTTP/2 connections to multiplex requests over.")
    var connections = 2

    @Option(help: "apns: the .p8 signing key (else env NOTIFY_APNS_KEY).")
    var keyFile: String?

    @Option(help: "apns: the key id (kid).")
    var keyId: String?

    @Option(help: "apns: the team id (iss).")
    var teamId: String?

    @Option(help: "fcm: the service-account JSON (else env NOTIFY_FCM_SERVICE_ACCOUNT).")
    var serviceAccount: String?

    @Option(help: "inapp: where the WebSocket gateway listens, HOST:PORT.")
    var listen = "127.0.0.1:8090"

    @Option(help: "inapp: milliseconds a device has to acknowledge a command.")
    var ackTimeoutMs = 5000

    @Option(help: "inapp, webhook: the shared secret's file (else env NOTIFY_INAPP_SECRET / NOTIFY_WEBHOOK_SECRET).")
    var secretFile: String?

    @Option(help: "inapp: a directory of token secrets, each file's name its kid; webhook: a directory of further secrets (setting sink.KIND.secretsDirectory).")
    var secretsDir: String?

    @Option(help: "webhook: the URL to POST commands to.")
    var url: String?

    @Option(help: "webhook, jsonl: only commands of this path (push or local).")
    var path: String?

    @Option(help: "webhook, jsonl: only commands for this provider (apns or fcm).")
    var provider: String?

    @Option(help: "jsonl: the file to append delivered commands to.")
    var out: String?

    func run() async throws {
        guard secretsDir == nil || kind == .inapp || kind == .webhook else {
            throw ValidationError("--secrets-dir is for --kind inapp or webhook.")
        }
        let settings = try await service.loadSettings(
            kafka: kafka, commandFlags: [("sink.\(kind.rawValue).secretsDirectory", "--secrets-dir", secretsDir)])
        settings.startLogging()
        let logger = settings.logger(label: "notify.sink.\(kind.rawValue)")
        let traceExport = try TraceExport.bootstrapForCommand(serviceName: "notify-sink-\(kind.rawValue)", logger: logger)
        try await service.requireKafka(settings, kafka: kafka)
        let shell = ServiceShell(settings: settings, logger: logger, traceExport: traceExport)
        shell.metrics.bootstrapMetricsSystem()
        let transport = HTTPTransportConfiguration(caFile: caFile, connections: connections)
        shell.metrics.startSinkSeries(kind: kind.rawValue)
        if kind == .inapp { shell.metrics.startInAppGatewaySeries() }
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
        observer.onPartitionsRevoked = { shell.status.partitionsRevoked(consumer: "the sink's consumer", remaining: $0) }
        var client = KafkaClientConfiguration(
            bootstrapServers: settings.kafka.bootstrap, clientId: "notify-sink-\(kind.rawValue)", properties: settings.kafka.properties)
        client.statistics = shell.metrics.kafkaStatistics
        let runtimeConfiguration = SinkRuntimeConfiguration(
            kafka: client, groupId: group, retry: RetryPolicy(maxAttempts: maxAttempts), maxInFlight: maxInFlight,
            clusterCheckInterval: settings.probes.checkInterval, ledgerRestoreMargin: settings.sink.ledgerRestoreMargin,
            observer: observer)
        switch kind {
        case .apns:
            let token = try APNsProviderToken(
                p8: try Secret.load(file: keyFile, environmentVariable: "NOTIFY_APNS_KEY"),
                keyId: try required(keyId, "--key-id"), teamId: try required(teamId, "--team-id")
            )
            let sink = try APNsSink(endpoint: endpoint ?? "https://api.push.apple.com", providerToken: token, transport: transport)
            try await serve(SinkRuntime(sink: sink, configuration: runtimeConfiguration, logger: logger), shell: shell)
        case .fcm:
            let account = try ServiceAccount(json: try Secret.load(file: serviceAccount, environmentVariable: "NOTIFY_FCM_SERVICE_ACCOUNT"))
            let sink = try FCMSink(endpoint: endpoint ?? "https://fcm.googleapis.com", account: account, transport: transport)
            try await serve(SinkRuntime(sink: sink, configuration: runtimeConfiguration, logger: logger), shell: shell)
        case .inapp:
            let (host, port) = try listenAddress(listen, flag: "--listen")
            let secrets = InAppTokenSecrets(
                withoutKid: try Secret.loadIfGiven(file: secretFile, environmentVariable: "NOTIFY_INAPP_SECRET", trimmingTrailingNewline: true),
                directory: settings.sink.inapp.secretsDirectory)
            let gateway = InAppGateway(
                secrets: secrets, clockLeeway: settings.sink.inapp.clockLeeway,
                logger: logger, onConnectionCount: { shell.metrics.setInAppConnections($0) }
            )
            let sink = InAppSink(gateway: gateway, ackTimeout: .milliseconds(ackTimeoutMs))
            try await gateway.serve(host: host, port: port) { port in
                logger.info("in-app gateway listening on \(host):\(port)\(InAppGateway.path)")
                try await serve(SinkRuntime(sink: sink, configuration: runtimeConfiguration, logger: logger), shell: shell)
            }
        case .webhook:
            let sink = try WebhookSink(
                url: try required(url, "--url"),
                secrets: try WebhookSecret.load(
                    file: secretFile, environmentVariable: "NOTIFY_WEBHOOK_SECRET", directory: settings.sink.webhook.secretsDirectory),
                legacySignature: settings.sink.webhook.legacySignature, selection: try selection(), transport: transport
            )
            try await serve(SinkRuntime(sink: sink, configuration: runtimeConfiguration, logger: logger), shell: shell)
        case .jsonl:
            let sink = try JSONLSink(path: try required(out, "--out"), selection: try selection())
            try await serve(SinkRuntime(sink: sink, configuration: runtimeConfiguration, logger: logger), shell: shell)
        }
    }

    /// Runs the runtime, with /healthz, /readyz and /metrics, until SIGTERM or SIGINT asks it to finish.
    private func serve(_ runtime: SinkRuntime, shell: ServiceShell) async throws {
        try await shell.run([runtime]) { address in
            shell.logger.info("Serving /healthz, /readyz and /metrics at http://\(address)")
        }
    }

    private func required(_ value: String?, _ option: String) throws -> String {
        guard let value, !value.isEmpty else { throw ValidationError("--kind \(kind.rawValue) needs \(option).") }
        return value
    }

    private func selection() throws -> CommandSelection {
        var selection = CommandSelection.all
        if let path {
            guard let value = DeliveryPath(rawValue: path) else { throw ValidationError("--path must be push or local.") }
            selection.paths = [value]
        }
        if let provider {
            guard let value = PushProvider(rawValue: provider) else { throw ValidationError("--provider must be apns or fcm.") }
            selection.providers = [value]
        }
        return selection
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
