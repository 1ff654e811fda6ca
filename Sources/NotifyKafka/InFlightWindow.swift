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

    /// Takes as many places as are free, up to `wanted` (at least one), waiting while the window is full.
    /// Returns how many it took.
    func acquire(upTo wanted: Int) async -> Int {
        let taken = state.withLock { $0.takePlaces(upTo: wanted) }
        if taken > 0 { return taken }
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let granted = state.withLock { state in
                if state.takePlaces(upTo: 1) == 1 { return true }
                state.waiters.append(continuation)
                return false
            }
            if granted { continuation.resume() }
        }
        return 1
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
    fileprivate mutating func takePlaces(upTo wanted: Int) -> Int {
        let taken = min(available, wanted)
        available -= taken
        return taken
    }
}
