/// The ordered steps of a ``StageRunner``'s sends, in one place: each step is chained to the same
/// step of the send before, so sends overlap without reordering.
///
/// A send's outputs are enqueued after the previous outputs, and count as acknowledged once they
/// and all outputs before them are. A save's changelog is enqueued after that and after the
/// previous changelog; its offsets are stored once its changelog is acknowledged and the previous
/// save's offsets are stored. A crash at any moment loses nothing.
///
/// It starts the steps and keeps the latest of each kind; its methods return what the runner
/// waits for before it goes on: the oldest batch or save once a window is over full, and
/// everything in flight to drain. `Enqueued` is what an enqueueing gives, which its
/// acknowledgement waits on (the producer's pending deliveries).
struct SaveChain<Enqueued: Sendable>: Sendable {
    /// At most this many batches' outputs await their acknowledgement while the next are folded.
    let maxBatchesInFlight: Int
    /// At most this many saves await their offsets being stored.
    let maxSavesInFlight: Int
    /// Outputs awaiting their acknowledgement, oldest first.
    private var inFlight: [Task<Void, any Error>] = []
    /// Saves whose offsets are not stored yet, oldest first.
    private var savesInFlight: [Task<Void, any Error>] = []
    /// The enqueueing of the latest outputs; the next ones wait for it.
    private var outputsEnqueued: Task<Enqueued, Never>?
    /// The acknowledgement of the latest outputs and all before them; the next save's changelog waits for it.
    private var outputsAcknowledged: Task<Void, any Error>?
    /// The enqueueing of the latest save's changelog; the next save's waits for it.
    private var changelogEnqueued: Task<Enqueued, any Error>?
    /// The storing of the latest save's offsets; the next save's waits for it.
    private var offsetsStored: Task<Void, any Error>?

    init(maxBatchesInFlight: Int, maxSavesInFlight: Int) {
        self.maxBatchesInFlight = maxBatchesInFlight
        self.maxSavesInFlight = maxSavesInFlight
    }

    /// How many batches and saves are in flight (not yet drained or waited for by a window).
    var inFlightCounts: (batches: Int, saves: Int) { (inFlight.count, savesInFlight.count) }

    /// What a send waits for before it goes on.
    enum WindowAction {
        case proceed
        /// The window was over full: wait for its oldest work, taken out of it.
        case wait(for: Task<Void, any Error>)
    }

    /// What ``drain()`` waits for.
    enum DrainAction {
        /// Nothing is in flight.
        case done
        /// Wait for these, taken out of the windows, then ask again (more may have come meanwhile).
        case wait(for: [Task<Void, any Error>])
    }

    /// Starts a send's outputs: `enqueue` runs once the previous outputs are enqueued, then
    /// `acknowledge` with what it gave; they count as acknowledged once `acknowledge` has returned
    /// and every earlier send's outputs are acknowledged. Call ``batchWindow()`` at the end of the send.
    mutating func queueOutputs(
        enqueue: @escaping @Sendable () async -> Enqueued,
        acknowledge: @escaping @Sendable (Enqueued) async throws -> Void
    ) {
        let previousEnqueued = outputsEnqueued
        let enqueued = Task {
            _ = await previousEnqueued?.value
            return await enqueue()
        }
        outputsEnqueued = enqueued
        let previousAcknowledged = outputsAcknowledged
        let acknowledged = Task {
            try await acknowledge(await enqueued.value)
            try await previousAcknowledged?.value
        }
        outputsAcknowledged = acknowledged
        inFlight.append(acknowledged)
    }

    /// Starts a save after the outputs last queued: its changelog (`encoded`, made off the runner)
    /// is enqueued by `enqueue` once those outputs and all before them are acknowledged and the
    /// previous changelog is enqueued; `store` stores its offsets once `acknowledge` has returned for
    /// the changelog and the previous save's offsets are stored. Returns whether the send waits.
    mutating func queueSave<Changelog: Sendable>(
        encoded: Task<Changelog, Never>,
        enqueue: @escaping @Sendable (Changelog) async -> Enqueued,
        acknowledge: @escaping @Sendable (Enqueued) async throws -> Void,
        store: @escaping @Sendable () -> Void
    ) -> WindowAction {
        let acknowledged = outputsAcknowledged
        let previousChangelog = changelogEnqueued
        let changelog = Task {
            let records = await encoded.value
            try await acknowledged?.value
            _ = try await previousChangelog?.value
            return await enqueue(records)
        }
        changelogEnqueued = changelog
        let previousSave = offsetsStored
        let stored = Task {
            try await acknowledge(try await changelog.value)
            try await previousSave?.value
            store()
        }
        offsetsStored = stored
        savesInFlight.append(stored)
        return savesInFlight.count > maxSavesInFlight ? .wait(for: savesInFlight.removeFirst()) : .proceed
    }

    /// Ends a send: whether it waits for the oldest batch's acknowledgement.
    mutating func batchWindow() -> WindowAction {
        inFlight.count > maxBatchesInFlight ? .wait(for: inFlight.removeFirst()) : .proceed
    }

    /// Everything in flight, taken out of the windows, or `done` when nothing is.
    mutating func drain() -> DrainAction {
        guard !inFlight.isEmpty || !savesInFlight.isEmpty else { return .done }
        defer {
            inFlight = []
            savesInFlight = []
        }
        return .wait(for: inFlight + savesInFlight)
    }
}
