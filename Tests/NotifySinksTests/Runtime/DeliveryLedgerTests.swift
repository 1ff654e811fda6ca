import Foundation
import NotifyCore
import Testing

@testable import NotifySinks

@Suite struct DeliveryLedgerTests {
    let now = Date(timeIntervalSince1970: 1_795_000_000)

    func entry(
        _ id: String, _ kind: NotificationOutcome.Kind = .delivered, secondsAgo: TimeInterval, token: String? = nil
    ) -> LedgerEntry {
        LedgerEntry(
            commandId: id, outcome: kind, at: Timestamps.format(now.addingTimeInterval(-secondsAgo)), token: token)
    }

    @Test func entriesOlderThanTheLongestTTLAreForgottenAndNewerOnesKept() {
        let ledger = DeliveryLedger(kind: "apns", retention: 1_000)
        ledger.record(entry("old", secondsAgo: 1_500))
        ledger.record(entry("recent", secondsAgo: 10))
        ledger.record(entry("old-token", .tokenInvalid, secondsAgo: 1_500, token: "t-old"))
        ledger.record(entry("new-token", .tokenInvalid, secondsAgo: 10, token: "t-new"))
        ledger.prune(now: now)
        #expect(!ledger.hasOutcome("old"))
        #expect(ledger.hasOutcome("recent"))
        #expect(!ledger.isInvalidated(token: "t-old", eventTime: now.addingTimeInterval(-2_000)))
        #expect(ledger.isInvalidated(token: "t-new", eventTime: now.addingTimeInterval(-20)))
    }

    /// Taking outcomes in prunes by itself: after 10,000 (or, for a larger ledger, as many as the
    /// last pruning kept), what is past the retention is gone and what is within it stays.
    @Test func outcomesTakenInPruneTheLedgerByThemselves() {
        let ledger = DeliveryLedger(kind: "apns", retention: 60)
        ledger.record(
            LedgerEntry(
                commandId: "expired", outcome: .delivered, at: Timestamps.format(Date().addingTimeInterval(-3_600))))
        for index in 0..<9_998 {
            ledger.record(LedgerEntry(commandId: "c\(index)", outcome: .delivered, at: Timestamps.format(Date())))
        }
        #expect(ledger.hasOutcome("expired"), "no pruning before 10,000 outcomes")
        ledger.record(LedgerEntry(commandId: "last", outcome: .delivered, at: Timestamps.format(Date())))
        #expect(!ledger.hasOutcome("expired"))
        #expect(ledger.hasOutcome("c0") && ledger.hasOutcome("last"))
    }

    /// By default an outcome is kept 28 days (the longest TTL the platforms accept) and an hour:
    /// a minute short of that it is still there, a minute past it gone.
    @Test func theDefaultRetentionIs28DaysAndAnHour() {
        let ledger = DeliveryLedger(kind: "apns")
        let retention: TimeInterval = 28 * 86_400 + 3_600
        ledger.record(entry("within", secondsAgo: retention - 60))
        ledger.record(entry("beyond", secondsAgo: retention + 60))
        ledger.prune(now: now)
        #expect(ledger.hasOutcome("within"))
        #expect(!ledger.hasOutcome("beyond"))
    }
}
