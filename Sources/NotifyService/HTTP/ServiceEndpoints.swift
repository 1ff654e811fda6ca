import Hummingbird
import Logging
import NIOCore
import ServiceLifecycle

/// The HTTP endpoints every long-running command serves (Hummingbird 2):
///
/// - `GET /healthz`: 200 `ok` while the process is alive, 503 with the reason once marked unhealthy.
/// - `GET /readyz`: 200 `ready` once ``ServiceStatus/markReady()`` was called, else 503 with the reason.
/// - `GET /metrics`: the Prometheus text exposition of ``NotifyMetrics``.
/// - `GET /` and `GET /console/events`: the live console and its Server-Sent Events feed (when enabled).
public enum ServiceEndpoints {
    /// The Hummingbird application, a `Service` to run in a `ServiceGroup`.
    /// - Parameter onListening: called with the bound address once the server accepts connections
    ///   (the real port when `listen` asked for port 0).
    public static func application(
        listen: HostAndPort, status: ServiceStatus, metrics: NotifyMetrics, console: ConsoleFeed?, logger: Logger,
        onListening: @escaping @Sendable (HostAndPort) async -> Void = { _ in }
    ) -> some Service {
        let router = Router()
        router.middlewares.add(TracingMiddleware())
        router.get("healthz") { _, _ -> Response in
            if let reason = status.unhealthyReason {
                return .text("unhealthy: \(reason)\n", status: .serviceUnavailable)
            }
            return .text("ok\n")
        }
        router.get("readyz") { _, _ -> Response in
            if let reason = status.notReadyReason {
                return .text("not ready: \(reason)\n", status: .serviceUnavailable)
            }
            return .text("ready\n")
        }
        router.get("metrics") { _, _ -> Response in
            Response(
                status: .ok,
                headers: [.contentType: "text/plain; version=0.0.4; charset=utf-8"],
                body: .init(byteBuffer: ByteBuffer(string: metrics.exposition())))
        }
        if let console {
            router.get("/") { _, _ -> Response in
                Response(
                    status: .ok, headers: [.contentType: "text/html; charset=utf-8", .cacheControl: "no-store"],
                    body: .init(byteBuffer: ByteBuffer(string: ConsolePage.html(initial: console.recent()))))
            }
            router.get("console/events") { request, _ -> Response in
                let resumeAfter =
                    request.headers.first(where: { $0.name.canonicalName == "last-event-id" }).flatMap { Int($0.value) }
                    ?? request.uri.queryParameters.get("after", as: Int.self) ?? 0
                let items = console.subscribe(after: resumeAfter)
                return Response(
                    status: .ok,
                    headers: [.contentType: "text/event-stream", .cacheControl: "no-store"],
                    body: ResponseBody { writer in
                        try await writer.write(ByteBuffer(string: "retry: 1000\n\n"))
                        for await item in items.cancelOnGracefulShutdown() {
                            try await writer.write(
                                ByteBuffer(string: "id: \(item.sequence)\nevent: entry\ndata: \(item.json)\n\n"))
                        }
                        try await writer.finish(nil)
                    })
            }
        }
        return Application(
            router: router,
            configuration: ApplicationConfiguration(
                address: .hostname(listen.host, port: listen.port), serverName: nil),
            onServerRunning: { channel in
                let port = channel.localAddress?.port ?? listen.port
                await onListening(HostAndPort(host: listen.host, port: port))
            },
            logger: logger)
    }
}

extension Response {
    /// A plain-text response.
    static func text(_ body: String, status: HTTPResponse.Status = .ok) -> Response {
        Response(
            status: status, headers: [.contentType: "text/plain; charset=utf-8"],
            body: .init(byteBuffer: ByteBuffer(string: body)))
    }
}
