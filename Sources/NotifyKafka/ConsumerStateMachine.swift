/// The lifecycle of a ``KafkaConsumer``'s client, in one place: which calls may use the client,
/// when the poll thread closes it, and when it may release it. It decides and counts, and each
/// method returns what its caller does next; it is held in one `Mutex` (see `ConsumerHandle`).
///
/// ```
/// open(calls:) --requestClose--> closing(calls:) --clientClosed--> releasing(calls:) --last call ends--> closed
///                                                       \--------------(no call under way)------------/
/// ```
///
/// Calls go through while the consumer is open and while it closes (the `revoked` hook stores
/// offsets during librdkafka's close); once the client is closed they are refused, and it is
/// released after the last call under way has returned.
struct ConsumerStateMachine: Sendable {
    enum State: Equatable, Sendable {
        /// Polling; `calls` calls other than the poll thread's use the client now.
        case open(calls: Int)
        /// Asked to close: the poll thread closes the client at its next turn. Calls still go through.
        case closing(calls: Int)
        /// The client is closed and refuses new calls; released once the `calls` under way return.
        case releasing(calls: Int)
        /// The client is released (or about to be, by the poll thread).
        case closed
    }

    private(set) var state = State.open(calls: 0)

    /// What a call does before it uses the client.
    enum StartCallAction: Equatable {
        /// Use the client, then call ``finishCall()``.
        case call
        /// The client is closed: throw instead.
        case refuse
    }

    /// A call wants the client.
    mutating func startCall() -> StartCallAction {
        switch state {
        case .open(let calls):
            state = .open(calls: calls + 1)
            return .call
        case .closing(let calls):
            state = .closing(calls: calls + 1)
            return .call
        case .releasing, .closed:
            return .refuse
        }
    }

    /// What a call does once it is done with the client.
    enum FinishCallAction: Equatable {
        case none
        /// It was the last call the poll thread waits for: let the poll thread release the client.
        case resumeRelease
    }

    /// A call that ``startCall()`` let through is done with the client.
    mutating func finishCall() -> FinishCallAction {
        switch state {
        case .open(let calls):
            precondition(calls > 0, "a call finished that never started")
            state = .open(calls: calls - 1)
            return .none
        case .closing(let calls):
            precondition(calls > 0, "a call finished that never started")
            state = .closing(calls: calls - 1)
            return .none
        case .releasing(let calls) where calls > 1:
            state = .releasing(calls: calls - 1)
            return .none
        case .releasing:
            state = .closed
            return .resumeRelease
        case .closed:
            preconditionFailure("a call finished after the client was released")
        }
    }

    /// What the owner does when the consumer is asked to close.
    enum CloseAction: Equatable {
        case none
        /// End the record batches (after what is buffered), with `failure` if there is one.
        case endBatches(failure: KafkaError?)
    }

    /// The owner closes the consumer, or the poll thread met a fatal error (`failure`). The first
    /// request ends the batches; a failure always ends them with itself.
    mutating func requestClose(failure: KafkaError? = nil) -> CloseAction {
        switch state {
        case .open(let calls):
            state = .closing(calls: calls)
            return .endBatches(failure: failure)
        case .closing, .releasing, .closed:
            return failure.map { .endBatches(failure: $0) } ?? .none
        }
    }

    /// What the poll thread does at its next turn.
    enum PollAction: Equatable {
        /// Poll a batch.
        case poll
        /// Close the client (leave the group, commit), then call ``clientClosed()``.
        case close
    }

    /// The poll thread's next turn.
    func nextPollAction() -> PollAction {
        switch state {
        case .open: .poll
        case .closing, .releasing, .closed: .close
        }
    }

    /// What the poll thread does once the client is closed.
    enum ReleaseAction: Equatable {
        /// No call uses the client: release it now.
        case release
        /// Wait until ``finishCall()`` says `resumeRelease`, then release it.
        case waitForCalls
    }

    /// The poll thread has closed the client: from now on calls are refused.
    mutating func clientClosed() -> ReleaseAction {
        switch state {
        case .open(let calls), .closing(let calls):
            if calls == 0 {
                state = .closed
                return .release
            }
            state = .releasing(calls: calls)
            return .waitForCalls
        case .releasing, .closed:
            preconditionFailure("the client was closed twice")
        }
    }
}
