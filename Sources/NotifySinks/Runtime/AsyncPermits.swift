import Synchronization

/// A counting semaphore for tasks: at most `limit` holders at once, waiters served in order.
final class AsyncPermits: Sendable {
    private struct State {
        var available: Int
        /// Waiters in arrival order from `head` on (a queue without the cost of `removeFirst`).
        var waiters: [CheckedContinuation<Void, Never>] = []
        var head = 0

        mutating func take() -> Bool {
            guard available > 0 else { return false }
            available -= 1
            return true
        }
    }

    private let state: Mutex<State>

    init(limit: Int) {
        state = Mutex(State(available: max(1, limit)))
    }

    func acquire() async {
        // The common case, a free permit, suspends nothing.
        if state.withLock({ $0.take() }) { return }
        await withCheckedContinuation { continuation in
            let granted = state.withLock { state -> Bool in
                if state.take() { return true }
                state.waiters.append(continuation)
                return false
            }
            if granted { continuation.resume() }
        }
    }

    func release() {
        let next = state.withLock { state -> CheckedContinuation<Void, Never>? in
            guard state.head < state.waiters.count else {
                state.available += 1
                return nil
            }
            let waiter = state.waiters[state.head]
            state.head += 1
            if state.head == state.waiters.count {
                state.waiters.removeAll(keepingCapacity: true)
                state.head = 0
            } else if state.head > 1024, state.head * 2 > state.waiters.count {
                state.waiters.removeFirst(state.head)
                state.head = 0
            }
            return waiter
        }
        next?.resume()
    }
}
