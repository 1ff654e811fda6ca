import Foundation
import Testing

@testable import NotifySinks

@Suite struct RetryPolicyTests {
    let policy = RetryPolicy(maxAttempts: 6, initialDelay: .milliseconds(100), maxDelay: .seconds(1), multiplier: 2)

    @Test func backoffGrowsExponentiallyWithinItsJitterBand() {
        #expect(policy.delay(afterAttempt: 1, retryAfter: nil, jitter: 0) == .milliseconds(50))
        #expect(policy.delay(afterAttempt: 1, retryAfter: nil, jitter: 1) == .milliseconds(100))
        #expect(policy.delay(afterAttempt: 3, retryAfter: nil, jitter: 1) == .milliseconds(400))
        #expect(policy.delay(afterAttempt: 3, retryAfter: nil, jitter: 0) == .milliseconds(200))
    }

    @Test func backoffIsCappedButRetryAfterIsHonoured() {
        #expect(policy.delay(afterAttempt: 20, retryAfter: nil, jitter: 1) == .seconds(1))
        #expect(policy.delay(afterAttempt: 1, retryAfter: .seconds(5), jitter: 1) == .seconds(5))
        #expect(policy.delay(afterAttempt: 4, retryAfter: .milliseconds(10), jitter: 1) == .milliseconds(800))
    }

    @Test func retryAfterHeaderTakesSecondsAndDates() {
        let now = Date(timeIntervalSince1970: 1_700_000_000)
        #expect(RetryAfter.parse("12", now: now) == .seconds(12))
        #expect(RetryAfter.parse("Tue, 14 Nov 2023 22:13:40 GMT", now: now) == .seconds(20))
        #expect(RetryAfter.parse("soon", now: now) == nil)
    }
}

@Suite struct OffsetTrackerTests {
    @Test func commitsUpToTheFirstUnfinishedOffset() {
        var tracker = OffsetTracker()
        #expect(tracker.committable == nil)
        for offset in Int64(10)...14 { tracker.read(offset) }
        #expect(tracker.committable == 10)
        tracker.finish(11)
        tracker.finish(12)
        #expect(tracker.committable == 10)
        tracker.finish(10)
        #expect(tracker.committable == 13)
        tracker.finish(14)
        tracker.finish(13)
        #expect(tracker.committable == 15)
    }
}
