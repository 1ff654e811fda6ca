import Synchronization

/// What `/healthz` and `/readyz` answer. A process starts alive and not ready; it marks itself ready
/// once its state is restored (e.g. changelogs replayed after partition assignment), and unready again
/// while it restores after a rebalance or drains for shutdown.
public final class ServiceStatus: Sendable {
    private struct State {
        var ready = false
        var notReadyReason = "starting"
        var unhealthyReason: String?
    }

    private let state = Mutex(State())

    public init() {}

    /// `/readyz` answers 200 from now on.
    public func markReady() {
        state.withLock {
            $0.ready = true
            $0.notReadyReason = ""
        }
    }

    /// `/readyz` answers 503 with `reason` (e.g. "restoring state", "shutting down").
    public func markNotReady(_ reason: String) {
        state.withLock {
            $0.ready = false
            $0.notReadyReason = reason
        }
    }

    /// `/healthz` answers 503 with `reason` from now on, so the orchestrator restarts the process.
    public func markUnhealthy(_ reason: String) {
        state.withLock { $0.unhealthyReason = reason }
    }

    public var isReady: Bool { state.withLock { $0.ready } }

    /// `nil` when ready, else why not.
    public var notReadyReason: String? { state.withLock { $0.ready ? nil : $0.notReadyReason } }

    /// `nil` when healthy, else why not.
    public var unhealthyReason: String? { state.withLock { $0.unhealthyReason } }
}
