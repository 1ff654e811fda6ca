import Synchronization

/// A counting semaphore for async callers, released from any thread: bounds
/// how many produced records may await their delivery report at once.
final class InFlightWindow: Sendable {
    fileprivate struct State {
        var available: Int
        var waiters: [CheckedContinuation<Void, Never>] = []
    }

    private let state: Mutex<State>

    init(capacity: Int) {
        state = Mutex(State(available: capacity))
    }

    /// Takes one place, waiting while the window is full.
    func acquire() async {
        if state.withLock({ $0.takePlace() }) { return }
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let granted = state.withLock { state in
                if state.takePlace() { return true }
                state.waiters.append(continuation)
                return false
            }
            if granted { continuation.resume() }
        }
    }

    /// Gives one place back, to a waiter if there is one.
    func release() {
        let waiter = state.withLock { state -> CheckedContinuation<Void, Never>? in
            if state.waiters.isEmpty {
                state.available += 1
                return nil
            }
            return state.waiters.removeFirst()
        }
        waiter?.resume()
    }
}

extension InFlightWindow.State {
    fileprivate mutating func takePlace() -> Bool {
        guard available > 0 else { return false }
        available -= 1
        return true
    }
}
