import Synchronization

/// A counter shared across tasks without locks.
final class AtomicCounter: Sendable {
    private let value = Atomic<Int>(0)

    init() {}

    /// Adds one and returns the value before.
    func increment() -> Int {
        value.add(1, ordering: .relaxed).oldValue
    }
}
