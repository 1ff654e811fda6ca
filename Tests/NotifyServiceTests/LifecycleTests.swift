import AsyncHTTPClient
import Foundation
import Logging
import ServiceLifecycle
import Synchronization
import Testing
import UnixSignals

@testable import NotifyService

/// A consumer-like service: on graceful shutdown it stops taking work, finishes what is in flight
/// (a short pause standing in for the batch being processed), then commits.
private final class InFlightWork: Service, Sendable {
    let committed = Mutex(false)

    func run() async throws {
        try? await gracefulShutdown()
        try await Task.sleep(for: .milliseconds(300))
        committed.withLock { $0 = true }
    }
}

/// A service that ignores graceful shutdown and only stops when cancelled.
private final class Stubborn: Service, Sendable {
    let cancelled = Mutex(false)

    func run() async throws {
        do {
            try await Task.sleep(for: .seconds(3600))
        } catch {
            cancelled.withLock { $0 = true }
        }
    }
}

@Suite("Lifecycle: graceful shutdown within the deadline", .serialized)
struct LifecycleTests {
    @Test(
        "a signal stops the group: in-flight work finishes and commits, open console streams end, all within the grace period"
    )
    func signalShutdown() async throws {
        // 30 s: at 6 s (1.2 s to cancel) a starved test machine once went past the budget, and
        // ServiceGroup ended the test process.
        let shell = ServiceShell(settings: testSettings(gracePeriod: .seconds(30)), logger: Logger(label: "test"))
        let work = InFlightWork()
        let (ports, listening) = AsyncStream<Int>.makeStream()
        let group = shell.makeGroup([work], signals: [.sigusr2], onListening: { listening.yield($0.port) })
        let clock = ContinuousClock()
        try await withThrowingTaskGroup(of: Duration?.self) { tasks in
            tasks.addTask {
                try await group.run()
                return nil
            }
            var iterator = ports.makeAsyncIterator()
            guard let port = await iterator.next() else { throw ServerDidNotStart() }
            shell.status.markReady()
            shell.console.publish(.event(topic: "chat.messages", key: "c1", type: "message.received", summary: "hello"))

            // An open console stream must not hold the shutdown.
            let stream = try await HTTPClient.shared.execute(
                HTTPClientRequest(url: "http://127.0.0.1:\(port)/console/events?after=0"), timeout: .seconds(30))
            #expect(stream.status == .ok)
            let (firstChunk, heard) = AsyncStream<Void>.makeStream()
            tasks.addTask {
                for try await _ in stream.body { heard.yield() }
                return .zero  // the stream ended
            }
            // The stream is open and serving: the event published above has come through it.
            var chunks = firstChunk.makeAsyncIterator()
            guard await chunks.next() != nil else { throw ServerDidNotStart() }

            let start = clock.now
            kill(getpid(), UnixSignal.sigusr2.rawValue)
            var streamEnded = false
            var elapsed: Duration?
            for try await result in tasks {
                if result == .zero { streamEnded = true } else { elapsed = clock.now - start }
            }
            #expect(streamEnded)
            #expect(work.committed.withLock { $0 })
            #expect(shell.status.notReadyReason == "shutting down")
            #expect(elapsed.map { $0 < .seconds(30) } == true, "shutdown took \(String(describing: elapsed))")
        }
    }

    @Test("a service that ignores graceful shutdown is cancelled at the deadline")
    func deadline() async throws {
        // A budget a busy test machine can keep: a shutdown that outlasted it would end the whole test
        // process on purpose (``ShutdownDeadline``, as it ends a stuck `notify` process). With 4 s (then
        // 0.8 s to cancel, ServiceGroup's own limit) it did, once, with the whole suite starting on 2 cores.
        let shell = ServiceShell(settings: testSettings(gracePeriod: .seconds(20)), logger: Logger(label: "test"))
        let stubborn = Stubborn()
        let (ports, listening) = AsyncStream<Int>.makeStream()
        let group = shell.makeGroup([stubborn], signals: [], onListening: { listening.yield($0.port) })
        let clock = ContinuousClock()
        try await withThrowingTaskGroup(of: Void.self) { tasks in
            tasks.addTask { try? await group.run() }
            var iterator = ports.makeAsyncIterator()
            guard await iterator.next() != nil else { throw ServerDidNotStart() }
            let start = clock.now
            await group.triggerGracefulShutdown()
            try await tasks.waitForAll()
            let elapsed = clock.now - start
            #expect(stubborn.cancelled.withLock { $0 })
            #expect(elapsed >= .milliseconds(15_900), "cancelled before the graceful part of the budget: \(elapsed)")
            // Cancelled, not waited out (it would sleep an hour): the bound leaves a busy machine room.
            #expect(elapsed < .seconds(60), "shutdown took \(elapsed)")
        }
    }
}
