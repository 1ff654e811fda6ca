import NotifyKafka
import Synchronization

/// How many records the stages read, and how many of those they wrote the broker acknowledged, by topic,
/// in each tenth of a second of the throughput run: whether both stages work all through it, or one
/// holds records back and lets them go at once while the other waits (`notify-bench pipeline --timeline`).
final class ThroughputTimeline: Sendable {
    private struct Counts {
        var start: ContinuousClock.Instant?
        /// Tenth of a second since `start` → "read <topic>" or "acknowledged <topic>" → records.
        var buckets: [Int: [String: Int]] = [:]
    }

    private let counts = Mutex(Counts())

    /// Counts from now on.
    func start() {
        counts.withLock { $0.start = .now }
    }

    /// Stops counting; returns the lines of the report, a tenth of a second each, the empty ones left out.
    func stop() -> [String] {
        let buckets = counts.withLock { counts in
            counts.start = nil
            return counts.buckets
        }
        return buckets.keys.sorted().map { bucket in
            let counted = buckets[bucket]!.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }
            return "timeline: \(Double(bucket) / 10) s: " + counted.joined(separator: ", ")
        }
    }

    /// Counts records a stage read.
    func read(_ records: [KafkaRecord]) {
        note(records.map(\.topic), as: "read")
    }

    /// Counts records a stage wrote, once acknowledged.
    func acknowledged(_ records: [OutgoingRecord]) {
        note(records.map(\.topic), as: "acknowledged")
    }

    /// Counts, in milliseconds, the time a stage's actor worked.
    func worked(_ stage: String, _ duration: Duration) {
        note(["\(stage) ms"], as: "worked", count: Int(duration / .milliseconds(1)))
    }

    private func note(_ topics: [String], as what: String, count: Int = 1) {
        let now = ContinuousClock.now
        counts.withLock { counts in
            guard let start = counts.start else { return }
            let bucket = Int((now - start) / .milliseconds(100))
            for topic in topics { counts.buckets[bucket, default: [:]]["\(what) \(topic)", default: 0] += count }
        }
    }
}
