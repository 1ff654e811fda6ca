import Testing

@testable import NotifyPipeline

/// The release loop's alarm: it wakes at the deadline, at once when rung (also when rung before the
/// wait), and when its task is cancelled.
@Suite struct ReleaseAlarmTests {
    @Test func aWaitEndsAtItsDeadline() async {
        let alarm = ReleaseAlarm()
        let started = ContinuousClock.now
        await alarm.wait(until: started + .milliseconds(20))
        let waited = ContinuousClock.now - started
        #expect(waited >= .milliseconds(20))
        #expect(waited < .seconds(5), "the timer fired")
    }

    @Test func aRingBeforeTheWaitEndsItAtOnceAndOnlyOnce() async {
        let alarm = ReleaseAlarm()
        alarm.ring()
        alarm.ring()
        let started = ContinuousClock.now
        await alarm.wait(until: started + .seconds(30))
        #expect(ContinuousClock.now - started < .seconds(5), "the ring was kept")
        await alarm.wait(until: .now + .milliseconds(20))
        #expect(ContinuousClock.now - started >= .milliseconds(20), "two rings are one")
    }

    @Test func aRingEndsAWaitWithoutDeadline() async {
        let alarm = ReleaseAlarm()
        async let waited: Void = alarm.wait(until: nil)
        try? await Task.sleep(for: .milliseconds(20))
        alarm.ring()
        await waited
    }

    @Test func cancellationEndsAWait() async {
        let alarm = ReleaseAlarm()
        let waiting = Task { await alarm.wait(until: nil) }
        try? await Task.sleep(for: .milliseconds(20))
        waiting.cancel()
        await waiting.value
    }
}
