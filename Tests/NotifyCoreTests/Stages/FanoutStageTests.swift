import Testing

@testable import NotifyCore

@Suite struct FanoutStageTests {
    let configuration: CoreConfiguration
    let stage: FanoutStage

    init() throws {
        configuration = try Repository.configuration()
        stage = FanoutStage(configuration: configuration)
    }

    /// A state that knows alice and bob, a direct conversation c1 (alice, bob, frank) and c2 (alice, bob).
    func prepared(_ events: inout EventFactory) -> FanoutState {
        var state = FanoutState()
        for input: FanoutInput in [
            .identityUpdated(events.identity("alice", "Alice")), .identityUpdated(events.identity("bob", "Bob")),
            .conversation(events.conversation("c1", ["alice", "bob", "frank"], group: true)),
            .conversation(events.conversation("c2", ["alice", "bob"])),
        ] {
            _ = stage.fold(&state, input)
        }
        return state
    }

    @Test func anUnknownSenderHoldsItsConversationInOrderWhileOthersFlow() {
        var events = EventFactory()
        var state = prepared(&events)
        let held = stage.fold(&state, .message(events.message("m1", in: "c1", from: "frank", at: 1)))
        #expect(held.records.isEmpty)
        #expect(held.touchedKeys == ["c1"])
        let behind = stage.fold(&state, .message(events.message("m2", in: "c1", from: "alice", at: 1.2)))
        #expect(behind.records.isEmpty, "a later message of the same conversation waits behind the held one")
        let other = stage.fold(&state, .message(events.message("m3", in: "c2", from: "alice", at: 1.4)))
        #expect(other.records.map(\.messageId) == ["m3"], "other conversations are not held")
        #expect(other.touchedKeys == ["c2"], "its entry keeps the time of its latest message")

        let resolved = stage.fold(&state, .identityUpdated(events.identity("frank", "Frank", at: 1.5)))
        #expect(resolved.records.map(\.messageId) == ["m1", "m1", "m2", "m2"])
        #expect(resolved.records.allSatisfy { $0.content.identityResolved })
        #expect(resolved.records.first?.content.subtitle == "Frank")
        #expect(state.entries["c1"]?.held.isEmpty == true)
        #expect(resolved.touchedKeys == ["c1"])
    }

    /// A message folded after a later one of its conversation (its producer wrote it late) goes out
    /// marked late, so that stage 2 does not take it for a copy; its changelog entry remembers.
    @Test func aMessageOlderThanOneFannedOutBeforeGoesOutLate() throws {
        var events = EventFactory()
        var state = prepared(&events)
        let later = stage.fold(&state, .message(events.message("m2", in: "c2", from: "alice", at: 2)))
        #expect(later.records.map(\.late) == [false])
        #expect(later.touchedKeys == ["c2"])
        let late = stage.fold(&state, .message(events.message("m1", in: "c2", from: "alice", at: 1)))
        #expect(late.records.map(\.messageId) == ["m1"])
        #expect(late.records.map(\.late) == [true])
        #expect(CoreJSON.encode(late.records[0]) == CoreJSON.encode(late.records[0].jsonValue))
        #expect(try FanoutRecord(reading: FieldReader(late.records[0].jsonValue)).late)
        let other = stage.fold(&state, .message(events.message("m3", in: "c1", from: "alice", at: 1.5)))
        #expect(other.records.allSatisfy { !$0.late }, "only a later message of its own conversation counts")

        var restored = FanoutState()
        try restored.restore("c2", state.snapshot("c2"))
        #expect(restored.entries["c2"]?.latestAt == EventFactory.time(2))
    }

    /// A late message held behind one waiting for its sender's identity is marked late too, when it
    /// goes out after a later one.
    @Test func aLateMessageHeldBehindAWaitingOneGoesOutLate() {
        var events = EventFactory()
        var state = prepared(&events)
        for message in [
            events.message("m1", in: "c1", from: "frank", at: 1), events.message("m3", in: "c1", from: "alice", at: 3),
            events.message("m2", in: "c1", from: "alice", at: 2),
        ] {
            #expect(stage.fold(&state, .message(message)).records.isEmpty)
        }
        let released = stage.fold(&state, .identityUpdated(events.identity("frank", "Frank", at: 3.5)))
        #expect(released.records.map(\.messageId) == ["m1", "m1", "m3", "m3", "m2", "m2"])
        #expect(released.records.map(\.late) == [false, false, false, false, true, true])
    }

    @Test func theWaitEndsInEventTimeWithTheHandleAsFallback() {
        var events = EventFactory()
        var state = prepared(&events)
        _ = stage.fold(&state, .message(events.message("m1", in: "c2", from: "ghost", at: 10, handle: "ghost.h")))
        #expect(stage.fold(&state, .clock(EventFactory.time(12))).records.isEmpty, "an identity of 12 s still counts")
        let released = stage.fold(&state, .clock(EventFactory.time(12.001)))
        #expect(released.records.count == 2)
        let content = released.records[0].content
        #expect(!content.identityResolved)
        #expect(content.title == "ghost.h")
        #expect(content.sender == SenderIdentity(id: "ghost", displayName: "ghost.h", handle: "ghost.h"))
    }

    @Test func endOfInputReleasesEverythingWithTheGenericName() {
        var events = EventFactory()
        var state = prepared(&events)
        _ = stage.fold(&state, .message(events.message("m1", in: "c2", from: "ghost", at: 10)))
        let released = stage.fold(&state, .endOfInput)
        #expect(released.records.map(\.content.title) == ["Someone", "Someone"])
        #expect(released.records.map(\.recipientId) == ["alice", "bob"])
    }

    @Test func aDeletedIdentityFallsBackAtOnce() {
        var events = EventFactory()
        var state = prepared(&events)
        _ = stage.fold(&state, .identityDeleted(IdentityDeleted(id: "d", at: EventFactory.time(1), userId: "bob")))
        let output = stage.fold(&state, .message(events.message("m1", in: "c2", from: "bob", at: 2)))
        #expect(output.records.map(\.recipientId) == ["alice"])
        #expect(output.records.first?.content.identityResolved == false)
    }

    @Test func aMessageForAnUnknownConversationIsRejected() throws {
        var events = EventFactory()
        var state = prepared(&events)
        let output = stage.fold(&state, .message(events.message("m1", in: "nowhere", from: "alice", at: 1)))
        let rejection = try #require(output.rejection)
        #expect(rejection.contains("unknown conversation nowhere"))
        #expect(output.records.isEmpty)
    }

    @Test func theSenderIsNotNotifiedAndMentionsUseTheMentionPolicy() {
        var events = EventFactory()
        var state = prepared(&events)
        let output = stage.fold(
            &state, .message(events.message("m1", in: "c1", from: "alice", at: 1, mentions: ["bob"])))
        #expect(output.decisions.map(\.reason) == [.ownMessage])
        #expect(output.decisions.first?.userId == "alice")
        #expect(output.records.map(\.recipientId) == ["bob", "frank"])
        #expect(output.records.map(\.notificationType) == ["mention", "message"])
        #expect(output.records[0].content == output.records[1].content, "the content is built once per message")
    }

    @Test func aRestoredChangelogContinuesExactlyAsTheOriginal() throws {
        var events = EventFactory()
        var original = prepared(&events)
        _ = stage.fold(&original, .message(events.message("m1", in: "c1", from: "frank", at: 1)))
        _ = stage.fold(&original, .message(events.message("m2", in: "c1", from: "alice", at: 1.1)))

        var restored = FanoutState()
        _ = stage.fold(
            &restored,
            .identityUpdated(
                IdentityUpdated(
                    id: "a", at: EventFactory.time(0), userId: "alice", displayName: "Alice", handle: "alice")))
        _ = stage.fold(
            &restored,
            .identityUpdated(
                IdentityUpdated(id: "b", at: EventFactory.time(0), userId: "bob", displayName: "Bob", handle: "bob")))
        for key in original.entries.keys {
            try restored.restore(key, original.snapshot(key))
        }
        #expect(restored.entries == original.entries)
        let frank = events.identity("frank", "Frank", at: 1.5)
        let expected = stage.fold(&original, .identityUpdated(frank))
        let actual = stage.fold(&restored, .identityUpdated(frank))
        #expect(actual.records == expected.records)
        #expect(actual.records.count == 4)
        try restored.restore("c1", nil)
        #expect(restored.entries["c1"] == nil)
    }
}
