import Dispatch
import Synchronization

/// Wakes a stage's release loop (``StageRunner/releaseDue(checkInterval:)``) at the instant the
/// merges foresaw, or sooner when it is rung: a batch that leaves a record waiting which may go
/// before that instant rings it. Between the two the loop sleeps; it used to wake every millisecond
/// while records waited, and at 10,000 messages/s most of those passes found no task due.
///
/// One ring is kept while the loop is not waiting: its next wait returns at once.
final class ReleaseAlarm: Sendable {
    private struct State {
        var rung = false
        var waiter: CheckedContinuation<Void, Never>?
    }

    private let state = Mutex(State())
    /// One timer for every wait, rescheduled each time (under the lock), with no leeway
    /// (`DispatchQueue.asyncAfter` allows a tenth of the delay and at least a millisecond).
    nonisolated(unsafe) private let timer = DispatchSource.makeTimerSource(
        queue: DispatchQueue(label: "notify.release-alarm"))

    init() {
        timer.setEventHandler { [weak self] in self?.wake() }
        timer.activate()
    }

    deinit {
        timer.cancel()
    }

    /// Wakes the loop now, or at its next wait if it is not waiting.
    func ring() {
        let waiter = state.withLock { state in
            guard let waiter = state.waiter else {
                state.rung = true
                return nil as CheckedContinuation<Void, Never>?
            }
            state.waiter = nil
            return waiter
        }
        waiter?.resume()
    }

    /// Returns at `deadline` (never, if nil), when rung, or when the task is cancelled. A wait may
    /// end early (a timer of an earlier wait that fires late): the loop then looks for nothing.
    func wait(until deadline: ContinuousClock.Instant?) async {
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let ready = state.withLock { state in
                    if state.rung {
                        state.rung = false
                        return true
                    }
                    state.waiter = continuation
                    if let deadline {
                        let delay = max(.zero, deadline - .now)
                        timer.schedule(
                            deadline: .now() + .nanoseconds(Int(delay / .nanoseconds(1))), leeway: .nanoseconds(0))
                    }
                    return false
                }
                if ready { continuation.resume() }
            }
        } onCancel: {
            ring()
        }
    }

    /// The timer's end: the waiter, if any, goes on.
    private func wake() {
        let waiter = state.withLock { state in
            defer { state.waiter = nil }
            return state.waiter
        }
        waiter?.resume()
    }
}
