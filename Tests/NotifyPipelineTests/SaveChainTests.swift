import Synchronization
import Testing

@testable import NotifyPipeline

/// The order of a stage runner's sends, without a broker: each step of a send follows the same
/// step of the sends before it, a save's offsets follow its changelog and every earlier save, and
/// the windows make a send wait for the oldest work once they are over full.
@Suite struct SaveChainTests {
    /// The steps in the order they happened.
    final class Steps: Sendable {
        private let done = Mutex<[String]>([])

        func record(_ step: String) { done.withLock { $0.append(step) } }

        var all: [String] { done.withLock { $0 } }

        /// Whether each pair's first step happened before its second (both happened).
        func inOrder(_ pairs: (earlier: String, later: String)...) -> Bool {
            let steps = all
            return pairs.allSatisfy { pair in
                guard let first = steps.firstIndex(of: pair.earlier), let second = steps.firstIndex(of: pair.later)
                else { return false }
                return first < second
            }
        }
    }

    struct Failed: Error {}

    /// A step that takes a while, so a step that did not wait for it runs first.
    static func slowly(_ body: @Sendable () -> Void) async {
        try? await Task.sleep(for: .milliseconds(50))
        body()
    }

    /// A chain whose enqueueings give the name of what they enqueued.
    static func chain(maxBatchesInFlight: Int = 8, maxSavesInFlight: Int = 4) -> SaveChain<String> {
        SaveChain(maxBatchesInFlight: maxBatchesInFlight, maxSavesInFlight: maxSavesInFlight)
    }

    /// Queues what `queue` queues on a fresh chain, drains it and returns the steps taken.
    static func steps(_ queue: (inout SaveChain<String>, Steps) -> Void) async throws -> Steps {
        let steps = Steps()
        var chain = Self.chain()
        queue(&chain, steps)
        try await drain(&chain)
        return steps
    }

    static func drain(_ chain: inout SaveChain<String>) async throws {
        while case .wait(let pending) = chain.drain() {
            for work in pending { try await work.value }
        }
    }

    /// Queues a save named `name` that records its steps in `steps`.
    static func queueSave(
        _ name: String, on chain: inout SaveChain<String>, steps: Steps, slowAcknowledgement: Bool = false
    )
        -> SaveChain<String>.WindowAction
    {
        chain.queueSave(
            encoded: Task { name },
            enqueue: { changelog in
                steps.record("changelog \(changelog) enqueued")
                return changelog
            },
            acknowledge: { changelog in
                if slowAcknowledgement {
                    await Self.slowly { steps.record("changelog \(changelog) acknowledged") }
                } else {
                    steps.record("changelog \(changelog) acknowledged")
                }
            },
            store: { steps.record("offsets \(name) stored") })
    }

    @Test func outputsAreEnqueuedInTheOrderOfTheirSends() async throws {
        let steps = try await Self.steps { chain, steps in
            chain.queueOutputs(
                enqueue: {
                    await Self.slowly { steps.record("a enqueued") }
                    return "a"
                }, acknowledge: { _ in })
            chain.queueOutputs(
                enqueue: {
                    steps.record("b enqueued")
                    return "b"
                }, acknowledge: { _ in })
        }
        #expect(steps.all == ["a enqueued", "b enqueued"])
    }

    @Test func aSavesChangelogFollowsTheAcknowledgementOfEveryEarlierOutput() async throws {
        let steps = try await Self.steps { chain, steps in
            chain.queueOutputs(
                enqueue: { "a" }, acknowledge: { _ in await Self.slowly { steps.record("a acknowledged") } })
            chain.queueOutputs(enqueue: { "b" }, acknowledge: { _ in steps.record("b acknowledged") })
            _ = Self.queueSave("1", on: &chain, steps: steps)
        }
        #expect(
            steps.inOrder(
                ("a acknowledged", "changelog 1 enqueued"), ("b acknowledged", "changelog 1 enqueued"),
                ("changelog 1 acknowledged", "offsets 1 stored")), "\(steps.all)")
    }

    @Test func offsetsAreStoredAfterTheirChangelogAndEveryEarlierSave() async throws {
        let steps = try await Self.steps { chain, steps in
            chain.queueOutputs(enqueue: { "a" }, acknowledge: { _ in })
            _ = Self.queueSave("1", on: &chain, steps: steps, slowAcknowledgement: true)
            chain.queueOutputs(enqueue: { "b" }, acknowledge: { _ in })
            _ = Self.queueSave("2", on: &chain, steps: steps)
        }
        #expect(
            steps.inOrder(
                ("changelog 1 enqueued", "changelog 2 enqueued"), ("changelog 1 acknowledged", "offsets 1 stored"),
                ("offsets 1 stored", "offsets 2 stored")), "\(steps.all)")
    }

    @Test func aFailedAcknowledgementHoldsBackTheOffsetsOfEveryLaterSave() async throws {
        let steps = Steps()
        var chain = Self.chain()
        chain.queueOutputs(enqueue: { "a" }, acknowledge: { _ in throw Failed() })
        chain.queueOutputs(enqueue: { "b" }, acknowledge: { _ in steps.record("b acknowledged") })
        _ = Self.queueSave("1", on: &chain, steps: steps)
        await #expect(throws: Failed.self) { try await Self.drain(&chain) }
        // A later save chains on the failed work: it fails too, and stores nothing.
        _ = Self.queueSave("2", on: &chain, steps: steps)
        await #expect(throws: Failed.self) { try await Self.drain(&chain) }
        #expect(!steps.all.contains { $0.hasPrefix("offsets") || $0.hasPrefix("changelog") }, "\(steps.all)")
    }

    @Test func aSendWaitsForTheOldestWorkOnceAWindowIsOverFull() async throws {
        let steps = Steps()
        var chain = Self.chain(maxBatchesInFlight: 2, maxSavesInFlight: 1)
        for name in ["a", "b"] {
            chain.queueOutputs(enqueue: { name }, acknowledge: { _ in })
            guard case .proceed = chain.batchWindow() else {
                Issue.record("\(name) waited")
                return
            }
        }
        chain.queueOutputs(enqueue: { "c" }, acknowledge: { _ in })
        guard case .wait(let oldestBatch) = chain.batchWindow() else {
            Issue.record("c did not wait")
            return
        }
        try await oldestBatch.value
        #expect(chain.inFlightCounts.batches == 2)

        guard case .proceed = Self.queueSave("1", on: &chain, steps: steps) else {
            Issue.record("save 1 waited")
            return
        }
        guard case .wait(let oldestSave) = Self.queueSave("2", on: &chain, steps: steps) else {
            Issue.record("save 2 did not wait")
            return
        }
        try await oldestSave.value
        #expect(steps.all.contains("offsets 1 stored"))
        #expect(chain.inFlightCounts.saves == 1)
    }

    @Test func aDrainTakesEverythingInFlightThenIsDone() async throws {
        let steps = Steps()
        var chain = Self.chain()
        chain.queueOutputs(enqueue: { "a" }, acknowledge: { _ in })
        chain.queueOutputs(enqueue: { "b" }, acknowledge: { _ in })
        _ = Self.queueSave("1", on: &chain, steps: steps)
        guard case .wait(let pending) = chain.drain() else {
            Issue.record("nothing to drain")
            return
        }
        #expect(pending.count == 3)
        for work in pending { try await work.value }
        #expect(steps.all.contains("offsets 1 stored"))
        guard case .done = chain.drain() else {
            Issue.record("drained twice")
            return
        }
        #expect(chain.inFlightCounts.batches == 0 && chain.inFlightCounts.saves == 0)
    }
}
