import AsyncHTTPClient
import Foundation
import Logging
import NIOCore
import ServiceLifecycle
import UnixSignals

@testable import NotifyService

/// Settings for tests: HTTP on 127.0.0.1 with a free port, and a grace period a starved test machine
/// keeps (past it, the shell's shutdown deadline ends the test process on purpose).
func testSettings(gracePeriod: Duration = .seconds(60)) -> NotifySettings {
    var settings = NotifySettings.defaults
    settings.http.listen = HostAndPort(host: "127.0.0.1", port: 0)
    settings.shutdownGracePeriod = gracePeriod
    return settings
}

struct ServerDidNotStart: Error {}

/// Runs a ``ServiceShell`` with `services`, hands its HTTP port to `body`, then shuts it down
/// gracefully (also when `body` throws) and waits for it to stop.
func withRunningShell(
    _ shell: ServiceShell = ServiceShell(settings: testSettings(), logger: Logger(label: "test")),
    services: [any Service] = [],
    _ body: @Sendable (ServiceShell, Int) async throws -> Void
) async throws {
    let (ports, continuation) = AsyncStream<Int>.makeStream()
    let group = shell.makeGroup(services, signals: [], onListening: { continuation.yield($0.port) })
    try await withThrowingTaskGroup(of: Void.self) { tasks in
        tasks.addTask { try await group.run() }
        var iterator = ports.makeAsyncIterator()
        guard let port = await iterator.next() else { throw ServerDidNotStart() }
        do {
            try await body(shell, port)
        } catch {
            await group.triggerGracefulShutdown()
            try? await tasks.waitForAll()
            throw error
        }
        await group.triggerGracefulShutdown()
        try await tasks.waitForAll()
    }
}

/// GET `path` on 127.0.0.1:`port`: the status code and the body as text.
func get(_ path: String, port: Int) async throws -> (status: Int, body: String, contentType: String?) {
    let response = try await HTTPClient.shared.execute(
        HTTPClientRequest(url: "http://127.0.0.1:\(port)\(path)"), timeout: .seconds(10))
    let body = try await response.body.collect(upTo: 16 << 20)
    return (Int(response.status.code), String(buffer: body), response.headers.first(name: "content-type"))
}
