import Dispatch
import Foundation

/// SIGINT and SIGTERM, as the end of a long-running command.
enum TerminationSignal {
    /// Calls `action` once, on the first SIGINT or SIGTERM, until the returned handle is cancelled.
    static func handle(_ action: @escaping @Sendable () -> Void) -> Subscription {
        let queue = DispatchQueue(label: "notify.signals")
        let sources = [SIGINT, SIGTERM].map { signalNumber in
            signal(signalNumber, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: signalNumber, queue: queue)
            source.resume()
            return source
        }
        let subscription = Subscription(sources: sources)
        for source in sources {
            source.setEventHandler {
                subscription.cancel()
                action()
            }
        }
        return subscription
    }

    /// Waits for SIGINT or SIGTERM.
    static func wait() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            _ = handle { continuation.resume() }
        }
    }

    /// The installed handlers; cancelling removes them.
    final class Subscription: @unchecked Sendable {
        private let sources: [DispatchSourceSignal]

        init(sources: [DispatchSourceSignal]) {
            self.sources = sources
        }

        func cancel() {
            for source in sources { source.cancel() }
        }
    }
}

/// Runs `body` until SIGINT or SIGTERM, then cancels it and waits for it to wind down.
func runUntilTerminated(_ body: @escaping @Sendable () async throws -> Void) async throws {
    let work = Task { try await body() }
    let signals = TerminationSignal.handle { work.cancel() }
    defer { signals.cancel() }
    try await work.value
}
