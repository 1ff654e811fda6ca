import Logging
import ServiceLifecycle
import UnixSignals

/// What every long-running `notify` command shares: its settings, health and readiness, metrics, the
/// live console feed, and a `ServiceGroup` that runs the HTTP endpoints beside the command's own services.
///
/// Shutdown: on SIGTERM or SIGINT (or ``ServiceGroup/triggerGracefulShutdown()``) every service gets a
/// graceful-shutdown signal, last-listed first: a consumer stops fetching, finishes in-flight work,
/// commits and leaves its group. Whatever is still running after 80 % of `shutdown.gracePeriod` is
/// cancelled; `/readyz` reports "shutting down" at once, and the HTTP server stops last but for the span
/// exporter (``TraceExport``), which sends the spans left. The whole shutdown stays within
/// `shutdown.gracePeriod` (10 s by default): a shutdown that cannot finish (the Kafka cluster gone)
/// ends the process with status 1 then, and a second SIGTERM or SIGINT ends it at once
/// (``ShutdownDeadline``).
///
/// A command uses it like this:
///
/// ```swift
/// let settings = try await service.loadSettings(kafka: kafka)       // ServiceOptions + KafkaOptions
/// let shell = ServiceShell(settings: settings, logger: logger,
///                          console: ConsoleFeed(categories: core.categories))
/// let stages = PipelineService(settings: settings, metrics: shell.metrics, console: shell.console,
///                              onRestored: { shell.status.markReady() })   // a `Service`
/// try await shell.run([stages]) { address in print("serving http://\(address)") }
/// ```
public struct ServiceShell: Sendable {
    public let settings: NotifySettings
    public let status: ServiceStatus
    public let metrics: NotifyMetrics
    public let console: ConsoleFeed
    public let logger: Logger
    /// The span exporter (``TraceExport``), run first so that it stops last; nil when tracing is off.
    public let traceExport: (any Service)?

    public init(
        settings: NotifySettings, logger: Logger, status: ServiceStatus? = nil,
        metrics: NotifyMetrics = NotifyMetrics(), console: ConsoleFeed = ConsoleFeed(),
        traceExport: (any Service)? = nil
    ) {
        self.settings = settings
        self.logger = logger
        self.traceExport = traceExport
        self.status =
            status
            ?? ServiceStatus(
                thresholds: ProbeThresholds(
                    clusterTimeout: settings.probes.clusterTimeout, stuckAfter: settings.probes.stuckAfter))
        self.metrics = metrics
        self.console = console
    }

    /// Runs the HTTP endpoints and `services` until all end, one fails, or a shutdown signal arrives.
    /// - Parameters:
    ///   - services: the command's services, in start order (they are shut down in reverse).
    ///   - signals: the signals that start a graceful shutdown.
    ///   - onListening: called with the HTTP address once it accepts connections.
    public func run(
        _ services: [any Service], signals: [UnixSignal] = [.sigterm, .sigint],
        onListening: @escaping @Sendable (HostAndPort) async -> Void = { _ in }
    ) async throws {
        let group = makeGroup(services, signals: signals, onListening: onListening)
        try await group.run()
    }

    /// The group ``run(_:signals:onListening:)`` runs, for callers that need to trigger its shutdown.
    public func makeGroup(
        _ services: [any Service], signals: [UnixSignal] = [.sigterm, .sigint],
        onListening: @escaping @Sendable (HostAndPort) async -> Void = { _ in }
    ) -> ShellGroup {
        let http = ServiceEndpoints.application(
            listen: settings.http.listen, status: status, metrics: metrics,
            console: settings.http.console ? console : nil, logger: logger, onListening: onListening)
        let budget = settings.shutdownGracePeriod
        let deadline = ShutdownDeadline(gracePeriod: budget, signals: signals, logger: logger)
        let drain = ShutdownAnnouncer(status: status, console: console, deadline: deadline)
        var configuration = ServiceGroupConfiguration(
            services: (traceExport.map { [.init(service: $0)] } ?? []) + [.init(service: http)]
                + services.map { .init(service: $0) }
                + [.init(service: drain)],
            gracefulShutdownSignals: signals, cancellationSignals: [], logger: logger)
        configuration.maximumGracefulShutdownDuration = budget * 0.8
        // No fatalError of the group's once cancelling outlasts its allowance: the deadline ends the
        // process at the end of the budget, saying why.
        configuration.maximumCancellationDuration = nil
        return ShellGroup(group: ServiceGroup(configuration: configuration), deadline: deadline)
    }
}

/// A shell's `ServiceGroup`, with the deadline of its shutdown (``ShutdownDeadline``), called off
/// once the group has stopped.
public struct ShellGroup: Sendable {
    let group: ServiceGroup
    let deadline: ShutdownDeadline

    /// Runs the services until all end, one fails, or the shutdown has finished.
    public func run() async throws {
        defer { deadline.disarm() }
        try await group.run()
    }

    /// Starts the graceful shutdown, as a signal would.
    public func triggerGracefulShutdown() async {
        await group.triggerGracefulShutdown()
    }
}

/// On graceful shutdown (or when the group is cancelled): starts the shutdown's deadline, marks the
/// process not ready and ends the console's event streams, so open console pages do not keep the
/// HTTP server from stopping.
private struct ShutdownAnnouncer: Service {
    let status: ServiceStatus
    let console: ConsoleFeed
    let deadline: ShutdownDeadline

    func run() async throws {
        try? await gracefulShutdown()
        deadline.arm()
        status.markNotReady("shutting down")
        console.finish()
    }
}
