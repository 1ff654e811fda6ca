import Synchronization

/// The event clock of a stage's busiest task in this instance (``StageRunner``'s instance clock: the
/// latest settled clock of its tasks plus the lateness, in microseconds), as the runner last
/// computed it, shared with the merges of the stage's tasks.
///
/// An input read to its end settles on the later of its own task's clock and this one (see
/// ``EventTimeMerge/floor(now:)``), so a record is folded the lateness after the first record of a
/// later time was read in any of the instance's partitions, not after the last of them: what the
/// README promises, and no more. Without it, a slice of messages spread over the partitions waited
/// the lateness from the read of its last message in any of them.
final class InstanceEventClock: Sendable {
    private let latest = Mutex<(clock: Int64, at: ContinuousClock.Instant)?>(nil)

    init() {}

    /// Keeps `clock` (microseconds), computed at `now`.
    func note(_ clock: Int64, at now: ContinuousClock.Instant) {
        latest.withLock { $0 = (clock, now) }
    }

    /// The clock at `now` (microseconds): the one last noted, moved on by the wall-clock time since,
    /// as a settled clock moves on; nil before one is noted.
    func clock(at now: ContinuousClock.Instant) -> Int64? {
        latest.withLock { latest in
            latest.map { $0.clock.saturating(plus: (now - $0.at).microseconds) }
        }
    }
}
