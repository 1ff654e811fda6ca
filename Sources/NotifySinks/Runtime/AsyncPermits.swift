import Synchronization

/// A counting semaphore for tasks: at most `limit` holders at once, waiters served in order.
final class AsyncPermits: Sendable {
    private let state: Mutex<(available: Int, waiters: [CheckedContinuation<Void, Never>])>

    init(limit: Int) {
        state = Mutex((max(1, limit), []))
    }

    func acquire() async {
        await withCheckedContinuation { continuation in
            let granted = state.withLock { state -> Bool in
                if state.available > 0 {
                    state.available -= 1
                    return true
                }
                state.waiters.append(continuation)
                return false
            }
            if granted { continuation.resume() }
        }
    }

    func release() {
        let next = state.withLock { state -> CheckedContinuation<Void, Never>? in
            if state.waiters.isEmpty {
                state.available += 1
                return nil
            }
            return state.waiters.removeFirst()
        }
        next?.resume()
    }
}
