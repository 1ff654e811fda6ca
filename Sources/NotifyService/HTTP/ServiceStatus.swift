import Foundation
import Synchronization

/// How long a process may go without reaching its Kafka cluster (or without partitions after
/// losing them) before `/readyz` fails, and without finishing a cluster check before `/healthz` fails.
public struct ProbeThresholds: Sendable, Hashable {
    /// `probes.clusterTimeout`
    public var clusterTimeout: Duration
    /// `probes.stuckAfter`
    public var stuckAfter: Duration

    public init(clusterTimeout: Duration = .seconds(15), stuckAfter: Duration = .seconds(60)) {
        self.clusterTimeout = clusterTimeout
        self.stuckAfter = stuckAfter
    }
}

/// What `/healthz` and `/readyz` answer.
///
/// Ready (`/readyz` 200) once the process marked itself ready (its state restored) and as long as
/// all of these hold: it is not shutting down or restoring, its last successful request to the Kafka
/// cluster is at most ``ProbeThresholds/clusterTimeout`` old, and no consumer of it has been without
/// partitions for longer than that after losing them in a rebalance (a member that a rebalance gave
/// no partitions, because the group has more members than partitions, stays ready).
///
/// Alive (`/healthz` 200) unless marked unhealthy, or stuck: once cluster checks run
/// (``clusterCheck(reachable:)``, each bounded by its own timeout, reachable or not), none has
/// finished for ``ProbeThresholds/stuckAfter``. A lost broker makes a process unready, never dead.
public final class ServiceStatus: Sendable {
    private struct State {
        var ready = false
        var notReadyReason = "starting"
        var unhealthyReason: String?
        var lastContact: ContinuousClock.Instant?
        var lastCheck: ContinuousClock.Instant?
        /// Consumer (by name) → since when it holds no partitions after a revocation.
        var withoutPartitionsSince: [String: ContinuousClock.Instant] = [:]
    }

    private let state = Mutex(State())
    /// The thresholds the probes apply.
    public let thresholds: ProbeThresholds

    public init(thresholds: ProbeThresholds = ProbeThresholds()) {
        self.thresholds = thresholds
    }

    /// `/readyz` answers 200 from now on (unless the cluster or partitions are lost).
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

    /// A check of the cluster finished: it answered (`reachable`) or not within the check's timeout.
    public func clusterCheck(reachable: Bool) {
        let now = ContinuousClock.now
        state.withLock {
            $0.lastCheck = now
            if reachable { $0.lastContact = now }
        }
    }

    /// `consumer` was given partitions (possibly none, when the group has more members than partitions).
    public func partitionsAssigned(consumer: String) {
        _ = state.withLock { $0.withoutPartitionsSince.removeValue(forKey: consumer) }
    }

    /// `consumer` gave partitions up and holds `remaining` now; with none, it waits for an assignment.
    public func partitionsRevoked(consumer: String, remaining: Int) {
        let now = ContinuousClock.now
        state.withLock { state in
            if remaining == 0 {
                if state.withoutPartitionsSince[consumer] == nil { state.withoutPartitionsSince[consumer] = now }
            } else {
                state.withoutPartitionsSince[consumer] = nil
            }
        }
    }

    public var isReady: Bool { notReadyReason == nil }

    /// `nil` when ready, else why not.
    public var notReadyReason: String? {
        let now = ContinuousClock.now
        return state.withLock { state in
            if !state.ready { return state.notReadyReason }
            if let lastContact = state.lastContact, now - lastContact > thresholds.clusterTimeout {
                return "cannot reach the Kafka cluster for \(Self.seconds(now - lastContact))"
            }
            if let (consumer, since) = state.withoutPartitionsSince.min(by: { $0.value < $1.value }),
                now - since > thresholds.clusterTimeout
            {
                return "\(consumer) has held no partitions for \(Self.seconds(now - since)), since it lost them"
            }
            return nil
        }
    }

    /// `nil` when healthy, else why not.
    public var unhealthyReason: String? {
        let now = ContinuousClock.now
        return state.withLock { state in
            if let reason = state.unhealthyReason { return reason }
            if let lastCheck = state.lastCheck, now - lastCheck > thresholds.stuckAfter {
                return "stuck: no check of the Kafka cluster has finished for \(Self.seconds(now - lastCheck))"
            }
            return nil
        }
    }

    private static func seconds(_ duration: Duration) -> String {
        "\(duration.components.seconds) s"
    }
}
