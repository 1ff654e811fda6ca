import Hummingbird
import Logging
import NIOCore
import ServiceLifecycle

/// Runs a Hummingbird application for the duration of `body`, then shuts it down gracefully,
/// also when `body` throws. `build` receives the callback to pass as the application's
/// `onServerRunning`; `body` receives the port the server is bound to (so port 0 works).
public func withRunningServer<Value: Sendable>(
    logger: Logger,
    build: (@escaping @Sendable (any Channel) async -> Void) throws -> some ApplicationProtocol,
    body: (Int) async throws -> Value
) async throws -> Value {
    let bound = OneShot<Result<Int, any Error>>()
    let application = try build { channel in bound.resolve(.success(channel.localAddress?.port ?? 0)) }
    let services = ServiceGroup(configuration: .init(services: [application], logger: logger))
    return try await withThrowingTaskGroup(of: Void.self) { group in
        group.addTask {
            do {
                try await services.run()
                bound.resolve(.failure(ServerStoppedError()))
            } catch {
                bound.resolve(.failure(error))
                throw error
            }
        }
        do {
            let result = try await body(try await bound.value().get())
            await services.triggerGracefulShutdown()
            try await group.waitForAll()
            return result
        } catch {
            await services.triggerGracefulShutdown()
            try? await group.waitForAll()
            throw error
        }
    }
}

/// The server stopped before it was bound.
struct ServerStoppedError: Error {}
