import ArgumentParser
import NotifySinks

/// `notify sink --kind inapp`: a WebSocket gateway devices connect to; its listener runs around the sink's runtime.
struct InAppSinkOptions: SinkKindOptions {
    @Option(help: "inapp: where the WebSocket gateway listens, HOST:PORT (sink.inapp.listen; default 127.0.0.1:8090).")
    var listen: String?

    @Option(help: "inapp: milliseconds a device has to acknowledge a command (sink.inapp.ackTimeout; default 5000).")
    var ackTimeoutMs: Int?

    var readsSecretsDirectory: Bool { true }

    var settingFlags: [(key: String, flag: String, value: String?)] {
        [
            ("sink.inapp.listen", "--listen", listen),
            // The setting is in seconds: 1500 ms is "1.5".
            ("sink.inapp.ackTimeout", "--ack-timeout-ms", ackTimeoutMs.map { String(Double($0) / 1_000) }),
        ]
    }

    func makeSink(_ shared: SharedSinkOptions, _ context: SinkKindContext) throws -> InAppSink {
        context.metrics.startInAppGatewaySeries()
        let settings = context.settings.sink.inapp
        let secrets = InAppTokenSecrets(
            withoutKid: try Secret.loadIfGiven(
                file: settings.secretFile, environmentVariable: "NOTIFY_INAPP_SECRET", trimmingTrailingNewline: true),
            directory: settings.secretsDirectory)
        let metrics = context.metrics
        let gateway = InAppGateway(
            secrets: secrets, clockLeeway: settings.clockLeeway,
            logger: context.logger, onConnectionCount: { metrics.setInAppConnections($0) }
        )
        return InAppSink(gateway: gateway, ackTimeout: settings.ackTimeout)
    }

    /// Serves the gateway on `sink.inapp.listen` while `runtime` runs.
    func serve(_ sink: InAppSink, _ context: SinkKindContext, around runtime: () async throws -> Void) async throws {
        let (host, port) = (context.settings.sink.inapp.listen.host, context.settings.sink.inapp.listen.port)
        try await sink.gateway.serve(host: host, port: port) { port in
            context.logger.info("in-app gateway listening on \(host):\(port)\(InAppGateway.path)")
            try await runtime()
        }
    }
}
