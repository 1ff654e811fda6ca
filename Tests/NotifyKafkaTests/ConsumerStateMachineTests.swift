import Testing

@testable import NotifyKafka

/// The consumer's lifecycle, without a broker: which calls may use the client, when the poll
/// thread closes and releases it, and what each step tells its caller to do.
@Suite struct ConsumerStateMachineTests {
    @Test func anOpenConsumerPollsAndCountsItsCalls() {
        var machine = ConsumerStateMachine()
        #expect(machine.nextPollAction() == .poll)
        #expect(machine.startCall() == .call)
        #expect(machine.startCall() == .call)
        #expect(machine.state == .open(calls: 2))
        #expect(machine.finishCall() == .none)
        #expect(machine.state == .open(calls: 1))
    }

    @Test func theFirstCloseRequestEndsTheBatchesAndTheNextOnesDoNothing() {
        var machine = ConsumerStateMachine()
        #expect(machine.requestClose() == .endBatches(failure: nil))
        #expect(machine.state == .closing(calls: 0))
        #expect(machine.nextPollAction() == .close)
        #expect(machine.requestClose() == .none)
        #expect(machine.state == .closing(calls: 0))
    }

    @Test func aFatalErrorEndsTheBatchesWithItselfAlsoWhileClosing() {
        let fatal = KafkaError(code: -150, name: "_FATAL", message: "fatal", isFatal: true)
        var failed = ConsumerStateMachine()
        #expect(failed.requestClose(failure: fatal) == .endBatches(failure: fatal))
        #expect(failed.nextPollAction() == .close)

        var closing = ConsumerStateMachine()
        _ = closing.requestClose()
        #expect(closing.requestClose(failure: fatal) == .endBatches(failure: fatal))
        #expect(closing.state == .closing(calls: 0))
    }

    @Test func callsGoThroughWhileTheClientCloses() {
        // The revoked hook stores offsets from inside librdkafka's close.
        var machine = ConsumerStateMachine()
        _ = machine.requestClose()
        #expect(machine.startCall() == .call)
        #expect(machine.state == .closing(calls: 1))
        #expect(machine.finishCall() == .none)
        #expect(machine.clientClosed() == .release)
        #expect(machine.state == .closed)
    }

    @Test func theReleaseWaitsForTheLastCallUnderWay() {
        var machine = ConsumerStateMachine()
        #expect(machine.startCall() == .call)
        #expect(machine.startCall() == .call)
        _ = machine.requestClose()
        #expect(machine.clientClosed() == .waitForCalls)
        #expect(machine.state == .releasing(calls: 2))
        #expect(machine.finishCall() == .none)
        #expect(machine.state == .releasing(calls: 1))
        #expect(machine.finishCall() == .resumeRelease)
        #expect(machine.state == .closed)
    }

    @Test func callsAfterTheClientClosedAreRefused() {
        var releasing = ConsumerStateMachine()
        _ = releasing.startCall()
        _ = releasing.requestClose()
        _ = releasing.clientClosed()
        #expect(releasing.startCall() == .refuse)
        #expect(releasing.state == .releasing(calls: 1))

        var closed = ConsumerStateMachine()
        _ = closed.requestClose()
        _ = closed.clientClosed()
        #expect(closed.startCall() == .refuse)
        #expect(closed.requestClose() == .none)
        #expect(closed.nextPollAction() == .close)
        #expect(closed.state == .closed)
    }
}
