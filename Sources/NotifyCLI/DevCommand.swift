import ArgumentParser
import Foundation
import Logging
import NotifyCore
import NotifyKafka
import NotifyPipeline
import NotifyService
import NotifySinks
import ServiceLifecycle

/// `notify dev`: the whole system on this machine, with the demo scenario.
struct DevCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "dev",
        abstract:
            "Run everything on this machine: embedded broker, topics, both stages, in-app gateway, a console sink, the demo.",
        discussion: """
            Prints the bootstrap list (127.0.0.1:9092 unless --broker-port says otherwise), where this \
            executable is and the addresses it serves, then every decision, delivery and in-app outcome as it \
            flows. It stays up for `notify produce` and `notify inspect` from another terminal \
            (export NOTIFY_BOOTSTRAP=127.0.0.1:9092) until Ctrl-C, which ends it at once, also during \
            start-up. The embedded broker keeps data in memory only: see README, "The embedded broker, honestly".
            """
    )

    @OptionGroup var service: ServiceOptions

    @Option(help: "The scenario to load once everything is ready, its times moved to now ('none' for none).")
    var scenario = "Schemas/examples/scenarios/demo.json"

    @Option(help: "Where the in-app WebSocket gateway listens (setting sink.inapp.listen; default 127.0.0.1:8090).")
    var inappListen: String?

    @Option(
        help: ArgumentHelp(
            "The port of the bootstrap address 127.0.0.1:PORT, the same every run, so an exported NOTIFY_BOOTSTRAP stays valid (0: the broker's own port, new every run).",
            valueName: "port"))
    var brokerPort = 9092

    @Option(help: ArgumentHelp("The Schemas directory (setting pipeline.schemas).", valueName: "dir"))
    var schemas: String?

    func run() async throws {
        guard (0...65_535).contains(brokerPort) else {
            throw ValidationError("--broker-port \(brokerPort): expected 0...65535.")
        }
        // Read before the broker starts, so that its log lines are in log.format too; the bootstrap is the
        // embedded broker's, set once it runs.
        let loaded = try await service.loadSettings(
            kafka: KafkaOptions.parse([]),
            commandFlags: [
                ("kafka.bootstrap", "(embedded broker)", "127.0.0.1:\(brokerPort)"),
                ("pipeline.schemas", "--schemas", schemas),
                ("sink.inapp.listen", "--inapp-listen", inappListen),
            ])
        loaded.startLogging()
        var quiet = Logger(label: "notify.dev")
        quiet.logLevel = .warning
        // Checked before anything starts: a server that fails to bind later cancels every service.
        let gatewayAddress = loaded.sink.inapp.listen
        let (inappHost, inappPort) = (gatewayAddress.host, gatewayAddress.port)
        try BootstrapForwarder.requireFree(
            host: inappHost, port: inappPort,
            message: Self.inUse(gatewayAddress.description, what: "the in-app gateway", flag: "--inapp-listen"))
        try await EmbeddedBroker.withBroker(logger: quiet) { broker in
            let forwarder =
                try brokerPort == 0
                ? nil
                : BootstrapForwarder(
                    port: brokerPort, forwardingTo: Int(broker.bootstrapServers.split(separator: ":").last!)!)
            forwarder?.start()
            defer { forwarder?.stop() }
            let bootstrap = forwarder.map { "127.0.0.1:\($0.port)" } ?? broker.bootstrapServers
            var settings = loaded
            settings.kafka.bootstrap = bootstrap
            settings.kafka.properties.merge(EmbeddedBroker.clientProperties) { configured, _ in configured }
            let http = settings.http.listen
            try BootstrapForwarder.requireFree(
                host: http.host, port: http.port,
                message: Self.inUse(http.description, what: "the console", flag: "--http-listen"))
            let catalog = try TopicCatalog.load(
                from: URL(fileURLWithPath: settings.pipeline.schemasDirectory).appendingPathComponent("topics.json"))
            for topic in catalog.topics {
                try await broker.createTopic(topic.name, partitions: min(topic.partitions, 4))
            }
            let core = try settings.coreConfiguration()
            var logger = settings.logger(label: "notify.dev")
            if logger.logLevel == .info { logger.logLevel = .notice }
            let traceExport = try TraceExport.bootstrapForCommand(serviceName: "notify-dev", logger: logger)
            let shell = ServiceShell(
                settings: settings, logger: logger, console: ConsoleFeed(categories: core.categories),
                traceExport: traceExport)
            shell.metrics.bootstrapMetricsSystem()
            var client = KafkaClientConfiguration(
                bootstrapServers: broker.bootstrapServers, clientId: "notify-dev", properties: settings.kafka.properties
            )
            client.statistics = shell.metrics.kafkaStatistics

            let pipeline = PipelineInstance(
                settings: try settings.pipelineSettings(core: core).reporting(to: shell.metrics), observer: .dev(shell),
                logger: logger)
            let secret = Secret(
                bytes: (0..<32).map { _ in UInt8.random(in: 0...255) }, origin: "generated by notify dev")
            let gateway = InAppGateway(
                secrets: InAppTokenSecrets(withoutKid: secret), clockLeeway: settings.sink.inapp.clockLeeway,
                logger: logger,
                onConnectionCount: { shell.metrics.setInAppConnections($0) })
            shell.metrics.startInAppGatewaySeries()
            let inapp = SinkRuntime(
                sink: InAppSink(gateway: gateway, ackTimeout: settings.sink.inapp.ackTimeout), shell: shell,
                client: client,
                settings: settings)
            let console = SinkRuntime(sink: ConsoleSink(), shell: shell, client: client, settings: settings)
            let demo = ScenarioLoader(
                path: scenario == "none" ? nil : scenario, client: client, pipeline: pipeline, logger: logger)

            StandardOutput.writeLine("notify dev")
            StandardOutput.writeLine("  bootstrap   \(bootstrap)   (export NOTIFY_BOOTSTRAP=\(bootstrap))")
            StandardOutput.writeLine(
                "  notify      \(Self.executable)   (to run it by name: export PATH=\"\((Self.executable as NSString).deletingLastPathComponent):$PATH\")"
            )
            do {
                try await shell.run([
                    PipelineService(pipeline: pipeline),
                    GatewayService(gateway: gateway, runtime: inapp, host: inappHost, port: inappPort, secret: secret),
                    IdentityTap(client: client, shell: shell, logger: logger), console, demo,
                ]) { address in
                    StandardOutput.writeLine("  console     http://\(address)/   (/healthz /readyz /metrics)")
                }
            } catch  where String(describing: error).contains("Address already in use") {
                throw CommandFailure(
                    Self.addressInUse(http: settings.http.listen.description, inapp: gatewayAddress.description))
            }
        }
    }

    /// This executable's path.
    static var executable: String { URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath().path }

    /// The message of an address another process listens on.
    static func inUse(_ address: String, what: String, flag: String) -> String {
        "\(address) (\(flag), \(what)) is in use (another notify dev?): stop that process, or pass \(flag) HOST:PORT (port 0 picks a free one)"
    }

    /// The message of a listening address that another process holds, when the servers found out.
    static func addressInUse(http: String, inapp: String) -> String {
        """
        an address notify dev listens on is in use (another notify dev?): the console at \(http) (--http-listen) \
        or the in-app gateway at \(inapp) (--inapp-listen). Stop the other process, or pass free addresses \
        (port 0 picks a free one).
        """
    }
}

/// The in-app gateway and its sink runtime, as one service.
private struct GatewayService: Service {
    let gateway: InAppGateway
    let runtime: SinkRuntime
    let host: String
    let port: Int
    let secret: Secret

    func run() async throws {
        try await gateway.serve(host: host, port: port) { port in
            let token = try await InAppTokenClaims(
                userId: "bob", deviceId: "bob-iphone",
                expires: Date(timeIntervalSince1970: Double(Int(Date().timeIntervalSince1970) + 86_400))
            ).signed(secret: secret.bytes)
            StandardOutput.writeLine(
                "  in-app      ws://\(host):\(port)\(InAppGateway.path)   (bob's iPhone: Authorization: Bearer \(token))"
            )
            try await runtime.run()
        }
    }
}

/// Stands in for APNs and FCM in `notify dev`: prints each push and reports it delivered.
struct ConsoleSink: NotificationSink {
    /// The kind its outcomes name.
    static let kindName = "console"

    var kind: String { Self.kindName }

    func accepts(_ command: NotificationCommand) -> Bool { command.path == .push }

    func deliver(_ delivery: Delivery) async -> DeliveryResult {
        StandardOutput.writeLine("  delivered   \(DevLine.describe(delivery.command))")
        return .delivered
    }

    func shutdown() async {}
}

extension SinkRuntime {
    /// A sink of `notify dev` in the group `notify-dev-<kind>`, counted in the shell's metrics, with
    /// the retries and concurrency `settings` give every sink.
    convenience init(
        sink: any NotificationSink, shell: ServiceShell, client: KafkaClientConfiguration, settings: NotifySettings
    ) {
        shell.metrics.startSinkSeries(kind: sink.kind)
        self.init(
            sink: sink,
            configuration: SinkRuntimeConfiguration(
                settings: settings, client: client, groupId: "notify-dev-\(sink.kind)",
                observer: .counting(into: shell.metrics, kind: sink.kind)),
            logger: shell.logger)
    }
}

/// Shows identity changes in the log and the console: the stages read `chat.identities` into a table,
/// not as a stream, so their observer never sees them.
private struct IdentityTap: Service {
    let client: KafkaClientConfiguration
    let shell: ServiceShell
    let logger: Logger

    func run() async throws {
        let consumer = try KafkaConsumer(
            configuration: .init(client: client, groupId: "notify-dev-identities", autoOffsetReset: .earliest),
            logger: logger)
        try consumer.subscribe([Topic.identities])
        do {
            try await cancelWhenGracefulShutdown {
                try await consumer.forEachBatch { batch in
                    for record in batch {
                        let entry = ConsoleEntry.consumed(record)
                        shell.console.publish(entry)
                        if case .event(_, _, _, let summary, _, _, _) = entry {
                            StandardOutput.writeLine("  identity    \(summary)")
                        }
                    }
                }
            }
        } catch  where Task.isShuttingDownGracefully {
            // Shutting down: the consumer is closed.
        }
    }
}

/// Loads a scenario's events into their topics once the pipeline is ready, then waits for shutdown.
private struct ScenarioLoader: Service {
    let path: String?
    let client: KafkaClientConfiguration
    let pipeline: PipelineInstance
    let logger: Logger

    func run() async throws {
        guard let path else { return try await gracefulShutdown() }
        do {
            // Ctrl-C while the pipeline starts or the demo is being sent ends it at once.
            try await cancelWhenGracefulShutdown { try await load(path) }
        } catch  where Task.isShuttingDownGracefully {
            return
        }
        try await gracefulShutdown()
    }

    private func load(_ path: String) async throws {
        while !pipeline.isReady { try await Task.sleep(for: .milliseconds(100)) }
        guard let bytes = FileManager.default.contents(atPath: path) else {
            throw ValidationError("cannot read the scenario \(path)")
        }
        let events = try ScenarioRunner.events(of: [UInt8](bytes))
        // Played from now (in whole seconds): with the file's own times, pushes would be past their TTL.
        let first = events.compactMap { $0.value["at"]?.stringValue.flatMap(EventTime.init(rfc3339:))?.milliseconds }
            .min()
        let shift = first.map { (EventTime(Date()).milliseconds - $0) / 1000 * 1000 } ?? 0
        let producer = try KafkaProducer(configuration: client, logger: logger)
        do {
            for event in events.map({ $0.shifted(byMilliseconds: shift) }) {
                let value = CoreJSON.encode(event.value)
                let decoded = try InputEvent.decode(topic: event.topic, value: value)
                _ = try await producer.send(
                    OutgoingRecord(
                        topic: event.topic, key: Array(decoded.key.utf8), value: value,
                        timestampMilliseconds: decoded.at.milliseconds))
                // Spaced a little, as a live backend would publish them.
                try await Task.sleep(for: .milliseconds(150))
            }
        } catch {
            await producer.close()
            throw error
        }
        await producer.close()
        StandardOutput.writeLine("  demo        \(events.count) events of \(path) sent")
    }
}

extension PipelineObserver {
    /// The service observer plus one readable line per decision and command.
    static func dev(_ shell: ServiceShell) -> PipelineObserver {
        let service = PipelineObserver.service(shell)
        return PipelineObserver(
            onConsumed: { records in
                service.onConsumed(records)
                // The console sink prints its own deliveries; the in-app gateway's outcomes (a local
                // notification the app did not take, before its push fallback) are printed here.
                for record in records where record.topic == Topic.outcomes {
                    if case .outcome(let outcome, _) = ConsoleEntry.consumed(record),
                        outcome.sink != ConsoleSink.kindName
                    {
                        StandardOutput.writeLine("  outcome     \(DevLine.describe(outcome))")
                    }
                }
            },
            onDecisions: { decisions in
                service.onDecisions(decisions)
                for decision in decisions { StandardOutput.writeLine("  decision    \(decision)") }
            },
            onProduced: { records, commands, letters in
                service.onProduced(records, commands, letters)
                for command in commands { StandardOutput.writeLine("  command     \(DevLine.describe(command))") }
                for letter in letters {
                    StandardOutput.writeLine("  dead letter \(letter.sourceTopic): \(letter.reason)")
                }
            },
            onReady: {
                service.onReady()
                StandardOutput.writeLine("  ready       state restored, stages running")
            },
            onLag: service.onLag,
            onIdentityWaits: service.onIdentityWaits,
            onProcessed: service.onProcessed,
            onBusy: service.onBusy,
            onReleasedByMaximumWait: service.onReleasedByMaximumWait,
            onFoldedLate: service.onFoldedLate,
            onReadLate: service.onReadLate,
            onEventTimeWaits: service.onEventTimeWaits,
            onMisplaced: service.onMisplaced)
    }
}

/// One readable line for a command or an outcome.
enum DevLine {
    /// `undeliverable-local (not-connected) ← bob/bob-iphone by inapp, message m1`.
    static func describe(_ outcome: NotificationOutcome) -> String {
        var text = outcome.outcome.rawValue + (outcome.reason.map { " (\($0))" } ?? "")
        text += " ← \(outcome.recipient.userId)/\(outcome.recipient.deviceId) by \(outcome.sink)"
        if let messageId = outcome.messageId { text += ", message \(messageId)" }
        if outcome.outcome == .undeliverableLocal { text += ": a push follows if the device has one" }
        return text
    }

    static func describe(_ command: NotificationCommand) -> String {
        let content = command.content
        let who =
            "\(command.recipient.userId)/\(command.recipient.deviceId) (\(command.recipient.platform.rawValue), \(command.recipient.provider.rawValue))"
        guard let title = content["title"]?.stringValue else {
            return
                "\(command.path.rawValue) → \(who): badge \(content["badge"]?.intValue.map(String.init) ?? "-") (background)"
        }
        var text = "\(command.path.rawValue) → \(who): \(title)"
        if let subtitle = content["subtitle"]?.stringValue { text += " · \(subtitle)" }
        text += ": \(content["body"]?.stringValue ?? "")"
        if let badge = content["badge"]?.intValue { text += "  [badge \(badge)]" }
        if content["identityResolved"] == .bool(false) { text += "  (sender not yet known)" }
        return text
    }
}
