import Dispatch
import Foundation
import Synchronization

/// Runs librdkafka's blocking calls (commit, flush, metadata, admin requests)
/// on a thread of its own, never on Swift's cooperative thread pool.
struct BlockingCallQueue: Sendable {
    private let queue: DispatchQueue

    init(label: String) {
        queue = DispatchQueue(label: label)
    }

    /// Runs `call` on this queue's thread and resumes the caller with its result
    /// (a call that cannot fail makes a `run` that cannot either).
    func run<T: Sendable, Failure: Error>(_ call: @escaping @Sendable () throws(Failure) -> T) async throws(Failure)
        -> T
    {
        let result: Result<T, Failure> = await withCheckedContinuation { continuation in
            queue.async {
                continuation.resume(returning: Result { () throws(Failure) -> T in try call() })
            }
        }
        return try result.get()
    }
}

/// A dedicated thread that repeats `body` until it returns `false`; ``join()``
/// waits for that without blocking a thread.
final class ServiceThread: Sendable {
    private struct State {
        var done = false
        var waiters: [CheckedContinuation<Void, Never>] = []
    }

    private let state = Mutex(State())

    init(name: String, body: @escaping @Sendable () -> Bool) {
        let thread = Thread { [self] in
            while body() {}
            let waiters = state.withLock { state in
                state.done = true
                defer { state.waiters = [] }
                return state.waiters
            }
            for waiter in waiters { waiter.resume() }
        }
        thread.name = name
        thread.start()
    }

    /// Waits until the loop has ended.
    func join() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let done = state.withLock { state in
                if !state.done { state.waiters.append(continuation) }
                return state.done
            }
            if done { continuation.resume() }
        }
    }
}

/// Runs an async hook from a dedicated (non-cooperative) thread and blocks
/// that thread until the hook has finished.
func runBlocking(_ body: @escaping @Sendable () async -> Void) {
    let done = DispatchSemaphore(value: 0)
    Task {
        await body()
        done.signal()
    }
    done.wait()
}

/// A flag one thread raises and another polls.
final class StopFlag: Sendable {
    private let raised = Atomic<Bool>(false)

    func raise() { raised.store(true, ordering: .releasing) }

    /// Raises the flag; true only for the caller that raised it first.
    func raiseOnce() -> Bool {
        !raised.exchange(true, ordering: .acquiringAndReleasing)
    }

    var isRaised: Bool { raised.load(ordering: .acquiring) }
}
