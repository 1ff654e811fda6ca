import Synchronization

/// A value that is set once and awaited by any number of tasks; later `resolve`s are ignored.
final class OneShot<Value: Sendable>: Sendable {
    private let state: Mutex<(value: Value?, waiters: [CheckedContinuation<Value, Never>])> = Mutex((nil, []))

    init() {}

    /// Sets the value if it is not set yet; returns whether this call set it.
    @discardableResult
    func resolve(_ value: Value) -> Bool {
        let waiters = state.withLock { state -> [CheckedContinuation<Value, Never>]? in
            guard state.value == nil else { return nil }
            state.value = value
            defer { state.waiters = [] }
            return state.waiters
        }
        guard let waiters else { return false }
        for waiter in waiters { waiter.resume(returning: value) }
        return true
    }

    /// The value, once it is set.
    func value() async -> Value {
        await withCheckedContinuation { continuation in
            let known = state.withLock { state -> Value? in
                if let value = state.value { return value }
                state.waiters.append(continuation)
                return nil
            }
            if let known { continuation.resume(returning: known) }
        }
    }
}
