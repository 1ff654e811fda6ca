import Foundation
import NotifyCore
import Synchronization

/// What one sink kind has already done, rebuilt from `notify.outcomes`: the command ids that
/// have an outcome (so none is delivered twice, also after a restart or a redelivery), the ones
/// with only an `attempting` record (a sink stopped between sending them and reporting: they may
/// have reached the device, so they go out again as replacements) and the tokens reported invalid
/// (so nothing more goes to them). At start it reads `notify.outcomes` from where
/// ``LedgerRestoreStart`` finds, not from the topic's beginning.
///
/// Entries are forgotten once no command they could concern can still be delivered: a command
/// expires at most the longest TTL the platforms allow (rule 14) after its event, which came
/// before its outcome, so the ledger holds that window's entries, and at most as many again taken
/// in since its last pruning (a pruning waits for as many new outcomes as it kept).
final class DeliveryLedger: Sendable {
    private struct State {
        /// Command id → when its outcome was reported.
        var decided: [String: Date] = [:]
        /// Command id → when an attempt was recorded, for commands that may have been sent.
        var attempted: [String: Date] = [:]
        var invalidTokens: [String: Date] = [:]
        var positions: [Int32: Int64] = [:]
        var waiters: [(target: [Int32: Int64], done: OneShot<Void>)] = []
        var recordedSincePruning = 0
        /// Entries kept by the last pruning: the next waits for as many new outcomes, so each
        /// outcome costs constant work on average however large the ledger is.
        var keptAtLastPruning = 0
    }

    let kind: String
    /// How long after its outcome an entry is kept.
    let retention: TimeInterval
    private let state = Mutex(State())
    /// Fewest outcomes taken in between two prunings.
    private static let minimumPruningInterval = 10_000

    /// - Parameter retention: the longest TTL (2,419,200 s) plus an hour for clocks that disagree.
    init(kind: String, retention: TimeInterval = TimeInterval(NotificationPolicy.maximumTTLSeconds + 3600)) {
        self.kind = kind
        self.retention = retention
    }

    /// Takes in an outcome of this kind (read back from the topic, or just reported by this instance).
    func record(_ outcome: LedgerEntry) {
        state.withLock { state in
            let at = Timestamps.parse(outcome.at) ?? Date()
            if outcome.outcome == .attempting {
                state.attempted[outcome.commandId] = max(at, state.attempted[outcome.commandId] ?? at)
            } else {
                state.decided[outcome.commandId] = max(at, state.decided[outcome.commandId] ?? at)
            }
            if outcome.outcome == .tokenInvalid, let token = outcome.token, !token.isEmpty {
                state.invalidTokens[token] = max(at, state.invalidTokens[token] ?? at)
            }
            state.recordedSincePruning += 1
            if state.recordedSincePruning >= max(Self.minimumPruningInterval, state.keptAtLastPruning) {
                prune(&state, now: Date())
            }
        }
    }

    /// Forgets what no command still deliverable at `now` can concern.
    func prune(now: Date) {
        state.withLock { prune(&$0, now: now) }
    }

    private func prune(_ state: inout State, now: Date) {
        let horizon = now.addingTimeInterval(-retention)
        state.decided = state.decided.filter { $0.value >= horizon }
        state.attempted = state.attempted.filter { $0.value >= horizon }
        state.invalidTokens = state.invalidTokens.filter { $0.value >= horizon }
        state.recordedSincePruning = 0
        state.keptAtLastPruning = state.decided.count + state.attempted.count + state.invalidTokens.count
    }

    /// Whether `commandId` already has an outcome from this kind.
    func hasOutcome(_ commandId: String) -> Bool {
        state.withLock { $0.decided[commandId] != nil }
    }

    /// Whether an attempt of `commandId` was recorded (by this instance or an earlier one), so the
    /// command may already be on the device.
    func wasAttempted(_ commandId: String) -> Bool {
        state.withLock { $0.attempted[commandId] != nil }
    }

    /// Whether `token` was reported invalid after the event behind a command happened (`eventTime`):
    /// such a command was routed before the route stage learned of it.
    func isInvalidated(token: String, eventTime: Date) -> Bool {
        state.withLock { state in
            guard let invalidatedAt = state.invalidTokens[token] else { return false }
            return eventTime <= invalidatedAt
        }
    }

    /// Notes that partition `partition` of notify.outcomes has been read up to `nextOffset`.
    func advance(partition: Int32, to nextOffset: Int64) {
        let ready = state.withLock { state -> [OneShot<Void>] in
            state.positions[partition] = max(nextOffset, state.positions[partition] ?? 0)
            let positions = state.positions
            var ready: [OneShot<Void>] = []
            state.waiters.removeAll { waiter in
                guard Self.reached(waiter.target, positions) else { return false }
                ready.append(waiter.done)
                return true
            }
            return ready
        }
        for done in ready { done.resolve(()) }
    }

    /// Returns once every partition in `target` has been read up to its offset.
    func waitUntilRead(_ target: [Int32: Int64]) async {
        let done = OneShot<Void>()
        let alreadyThere = state.withLock { state -> Bool in
            if Self.reached(target, state.positions) { return true }
            state.waiters.append((target, done))
            return false
        }
        if alreadyThere { return }
        await done.value()
    }

    private static func reached(_ target: [Int32: Int64], _ positions: [Int32: Int64]) -> Bool {
        target.allSatisfy { partition, offset in offset <= 0 || (positions[partition] ?? 0) >= offset }
    }
}
