import ArgumentParser
import NotifySinks

/// `notify sink --kind inapp`: a WebSocket gateway devices connect to; its listener runs around the sink's runtime.
struct InAppSinkOptions: SinkKindOptions {
    @Option(help: "inapp: where the WebSocket gateway listens, HOST:PORT.")
    var listen = "127.0.0.1:8090"

    @Option(help: "inapp: milliseconds a device has to acknowledge a command.")
    var ackTimeoutMs = 5000

    var readsSecretsDirectory: Bool { true }

    func makeSink(_ shared: SharedSinkOptions, _ context: SinkKindContext) throws -> InAppSink {
        context.metrics.startInAppGatewaySeries()
        _ = try listenAddress(listen, flag: "--listen")
        let secrets = InAppTokenSecrets(
            withoutKid: try Secret.loadIfGiven(
                file: shared.secretFile, environmentVariable: "NOTIFY_INAPP_SECRET", trimmingTrailingNewline: true),
            directory: context.settings.sink.inapp.secretsDirectory)
        let metrics = context.metrics
        let gateway = InAppGateway(
            secrets: secrets, clockLeeway: context.settings.sink.inapp.clockLeeway,
            logger: context.logger, onConnectionCount: { metrics.setInAppConnections($0) }
        )
        return InAppSink(gateway: gateway, ackTimeout: .milliseconds(ackTimeoutMs))
    }

    /// Serves the gateway on `--listen` while `runtime` runs.
    func serve(_ sink: InAppSink, _ context: SinkKindContext, around runtime: () async throws -> Void) async throws {
        let (host, port) = try listenAddress(listen, flag: "--listen")
        try await sink.gateway.serve(host: host, port: port) { port in
            context.logger.info("in-app gateway listening on \(host):\(port)\(InAppGateway.path)")
            try await runtime()
        }
    }
}
