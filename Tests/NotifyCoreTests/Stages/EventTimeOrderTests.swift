import Testing

@testable import NotifyCore

/// The core decides time and duplicates: what a scenario gives depends only on its events, not on
/// how they were interleaved on arrival, and an event that comes twice is applied once.
@Suite struct EventTimeOrderTests {
    static func event(_ topic: String, _ value: String) -> ScenarioRunner.Event {
        ScenarioRunner.Event(topic: topic, value: try! CoreJSON.parse(Array(value.utf8)))
    }

    static let t0 = "2026-11-22T10:00:00Z"

    /// Alice writes to Bob (one iPhone) in a direct conversation.
    static let tables: [ScenarioRunner.Event] = [
        event(
            Topic.identities,
            #"{"type":"identity.updated","id":"i-a","at":"\#(t0)","userId":"alice","displayName":"Alice"}"#),
        event(
            Topic.identities,
            #"{"type":"identity.updated","id":"i-b","at":"\#(t0)","userId":"bob","displayName":"Bob"}"#),
        event(
            Topic.conversations,
            #"{"type":"conversation.updated","id":"c1","at":"\#(t0)","conversationId":"dm","kind":"direct","members":["alice","bob","frank"]}"#
        ),
        event(
            Topic.conversations,
            #"{"type":"conversation.updated","id":"c2","at":"\#(t0)","conversationId":"g2","kind":"group","name":"G","members":["carol","bob"]}"#
        ),
        event(
            Topic.devices,
            #"{"type":"devices.updated","id":"d-b","at":"\#(t0)","userId":"bob","devices":[{"deviceId":"bob-iphone","platform":"ios","provider":"apns","token":"tok-b","appId":"com.example.chat"}]}"#
        ),
    ]

    static func message(_ id: String, in conversation: String = "dm", from sender: String = "alice", at time: String)
        -> ScenarioRunner.Event
    {
        event(
            Topic.messages,
            #"{"type":"message.received","id":"e-\#(id)","at":"\#(time)","messageId":"\#(id)","conversationId":"\#(conversation)","senderId":"\#(sender)","kind":"text","text":"hi \#(id)"}"#
        )
    }

    static func run(_ events: [ScenarioRunner.Event], configuration: CoreConfiguration? = nil) throws
        -> ScenarioRunner.Result
    {
        let result = ScenarioRunner(configuration: try configuration ?? Repository.configuration()).run(events: events)
        #expect(result.rejections.isEmpty, "\(result.rejections)")
        return result
    }

    static func bytes(_ result: ScenarioRunner.Result) -> [String] {
        result.commands.map { String(decoding: CoreJSON.encode($0), as: UTF8.self) }
    }

    /// Rule 9 in event time: the identity comes 5 s after the message (wait 2 s) with nothing between.
    @Test func anIdentityAfterTheWaitFindsTheMessageGoneWithTheFallback() throws {
        let result = try Self.run(
            Self.tables + [
                Self.message("m1", from: "frank", at: "2026-11-22T10:00:10Z"),
                Self.event(
                    Topic.identities,
                    #"{"type":"identity.updated","id":"i-f","at":"2026-11-22T10:00:15Z","userId":"frank","displayName":"Frank"}"#
                ),
            ])
        #expect(result.commands.count == 1)
        #expect(result.commands.first?.content["identityResolved"] == .bool(false))
    }

    @Test func anIdentityWithinTheWaitResolvesTheMessage() throws {
        let result = try Self.run(
            Self.tables + [
                Self.message("m1", from: "frank", at: "2026-11-22T10:00:10Z"),
                Self.event(
                    Topic.identities,
                    #"{"type":"identity.updated","id":"i-f","at":"2026-11-22T10:00:12Z","userId":"frank","displayName":"Frank"}"#
                ),
            ])
        #expect(result.commands.first?.content["identityResolved"] == .bool(true))
    }

    /// An at-least-once producer sends one event twice: one command, one unread.
    @Test func aDuplicatedRecordIsAppliedOnce() throws {
        let once = try Self.run(
            Self.tables + [
                Self.message("m1", at: "2026-11-22T10:00:01Z"), Self.message("m2", at: "2026-11-22T10:00:02Z"),
            ])
        let twice = try Self.run(
            Self.tables + [
                Self.message("m1", at: "2026-11-22T10:00:01Z"), Self.message("m1", at: "2026-11-22T10:00:01Z"),
                Self.tables[4], Self.message("m2", at: "2026-11-22T10:00:02Z"),
            ])
        #expect(once.commands.count == 2)
        #expect(Self.bytes(twice) == Self.bytes(once))
    }

    /// The same events in another arrival order (each key's own order kept) give the same bytes.
    @Test func theArrivalOrderAcrossKeysChangesNothing() throws {
        var events = Self.tables
        for index in 0..<20 {
            let second = String(format: "%02d", index)
            events.append(Self.message("a\(index)", at: "2026-11-22T10:00:\(second).100Z"))
            events.append(Self.message("c\(index)", in: "g2", from: "carol", at: "2026-11-22T10:00:\(second).200Z"))
            if index % 5 == 4 {
                events.append(
                    Self.event(
                        Topic.reads,
                        #"{"type":"conversation.read","id":"r\#(index)","at":"2026-11-22T10:00:\#(second).300Z","userId":"bob","conversationId":"dm"}"#
                    ))
            }
        }
        let expected = Self.bytes(try Self.run(events))
        // Messages of g2 arrive last, reads first, tables at the end: as a lagging partition would give them.
        let reordered =
            events.filter { $0.topic == Topic.reads }
            + events.filter { $0.topic == Topic.messages && $0.value["conversationId"]?.stringValue == "dm" }
            + events.filter { $0.topic == Topic.messages && $0.value["conversationId"]?.stringValue == "g2" }
            + events.filter { $0.topic != Topic.messages && $0.topic != Topic.reads }
        let result = try Self.run(reordered)
        #expect(Set(Self.bytes(result)) == Set(expected))
        #expect(Self.bytes(result).count == expected.count)
        let badges = result.commands.filter { $0.messageId != nil }.map { $0.content["badge"]?.intValue ?? -1 }
        #expect(badges.prefix(4) == [1, 2, 3, 4], "badges count up in event time across both conversations")
    }

    /// A client state produced after a message but timestamped before it applies to it.
    @Test func aLateClientStateTimestampedBeforeAMessageAppliesToIt() throws {
        let result = try Self.run(
            Self.tables + [
                Self.message("m1", at: "2026-11-22T10:00:10Z"),
                Self.event(
                    Topic.clientState,
                    #"{"type":"client.state","id":"s1","at":"2026-11-22T10:00:09Z","userId":"bob","deviceId":"bob-iphone","state":"foreground","screen":{"kind":"talkroom","conversationId":"dm"}}"#
                ),
            ])
        #expect(result.commands.isEmpty)
        #expect(result.decisions.contains { $0.reason == .foregroundInConversation && $0.messageId == "m1" })
    }

    /// Stage 2 with Bob's iPhone known, and nothing else.
    static func bobsRoute() throws -> (stage: RouteStage, state: RouteState) {
        let stage = RouteStage(configuration: try Repository.configuration())
        var state = RouteState()
        _ = stage.fold(&state, .devices(try DevicesUpdated(json: tables[4].value)))
        return (stage, state)
    }

    /// Alice's message `id` to Bob in "dm", `seconds` after t0, as stage 1 writes it.
    static func directRecord(_ id: String, at seconds: Int64, late: Bool = false) -> FanoutRecord {
        let content = NotificationContent(
            title: "Alice", subtitle: nil, body: "hi", threadId: "dm", category: "message",
            userInfo: NotificationUserInfo(talkroomId: "dm", messageId: id, senderId: "alice"),
            sender: SenderIdentity(id: "alice", displayName: "Alice"),
            conversation: ConversationIdentity(id: "dm", isGroup: false),
            kind: .text, attachment: nil, identityResolved: true)
        return FanoutRecord(
            at: EventTime(rfc3339: t0)!.adding(milliseconds: seconds * 1000), recipientId: "bob",
            conversationId: "dm", messageId: id, notificationType: "message", content: content, late: late)
    }

    /// Stage 1 writes a fanout record again after a crash, far from the first: routed once.
    @Test func aFanoutRecordWrittenAgainLaterIsRecognised() throws {
        let (stage, bob) = try Self.bobsRoute()
        var state = bob
        #expect(stage.fold(&state, .fanout(Self.directRecord("m1", at: 1))).commands.count == 1)
        for second in 2..<60 { _ = stage.fold(&state, .fanout(Self.directRecord("m\(second)", at: Int64(second)))) }
        let again = stage.fold(&state, .fanout(Self.directRecord("m1", at: 1)))
        #expect(again.commands.isEmpty)
        #expect(again.decisions.map(\.reason) == [.alreadyApplied])
        #expect(state.entries["bob"]?.badge == 59)
        // Restored from its changelog record, the state still knows.
        var restored = RouteState()
        try restored.restore("bob", state.snapshot("bob"), recentEventIds: [])
        #expect(
            stage.fold(&restored, .fanout(Self.directRecord("m30", at: 30))).decisions.map(\.reason) == [
                .alreadyApplied
            ])
    }

    /// Messages of one conversation with the same time are told apart by their ids, kept sorted
    /// whatever order they come in; a later message's time replaces them.
    @Test func messagesOfOneTimeAreRecognisedByTheirIds() throws {
        let (stage, bob) = try Self.bobsRoute()
        var state = bob
        for id in ["m2c", "m2a", "m2b"] {
            #expect(stage.fold(&state, .fanout(Self.directRecord(id, at: 2))).commands.count == 1)
        }
        #expect(state.entries["bob"]?.latestMessages["dm"]?.messageIds == ["m2a", "m2b", "m2c"])
        // Past the last event ids remembered: recognised by the time and the ids alone.
        for second in 3..<40 { _ = stage.fold(&state, .fanout(Self.directRecord("n\(second)", at: 2))) }
        for id in ["m2a", "m2b", "m2c", "n3"] {
            #expect(
                stage.fold(&state, .fanout(Self.directRecord(id, at: 2))).decisions.map(\.reason) == [.alreadyApplied])
        }
        #expect(state.entries["bob"]?.latestMessages["dm"]?.messageIds.count == 40)
        #expect(stage.fold(&state, .fanout(Self.directRecord("m3", at: 3))).commands.count == 1)
        #expect(state.entries["bob"]?.latestMessages["dm"]?.messageIds == ["m3"])
        #expect(state.entries["bob"]?.badge == 41)
    }

    /// What stage 2 keeps to recognise copies is bounded by what can still be delivered: once the
    /// longest TTL has passed since a conversation's messages, their entries go, and a copy that comes
    /// after that makes a command that has expired already (the sinks report it `expired`).
    @Test func copiesAreRememberedOnlyWhileTheirMessagesCanBeDelivered() throws {
        let (stage, bob) = try Self.bobsRoute()
        var state = bob
        _ = stage.fold(&state, .fanout(Self.directRecord("m2", at: 2)))
        _ = stage.fold(&state, .fanout(Self.directRecord("m1", at: 1, late: true)))
        #expect(state.entries["bob"]?.lateMessages["dm"]?.keys.sorted() == ["m1"])
        let ttl = stage.configuration.policies.longestTTLSeconds
        // Past every TTL, and past the last event ids remembered.
        for second in 3..<60 {
            _ = stage.fold(&state, .fanout(Self.directRecord("m\(second)", at: ttl + Int64(second))))
        }
        #expect(state.entries["bob"]?.lateMessages.isEmpty == true, "m1 is past every TTL")
        #expect(state.entries["bob"]?.latestMessages["dm"]?.messageIds == ["m59"])
        let copy = stage.fold(&state, .fanout(Self.directRecord("m1", at: 1, late: true)))
        #expect(!copy.commands.isEmpty, "nothing remembers m1 any more: it is routed again")
        #expect(state.entries["bob"]?.badge == 60, "and counted again in the badge")
        let now = try #require(state.now)
        for command in copy.commands {
            let expires = try #require(EventTime(rfc3339: command.expiresAt))
            #expect(expires < now, "a copy routed again must not be deliverable")
        }
    }

    /// A message its producer wrote later than the lateness behind a later one of its conversation
    /// reaches stage 2 after it, marked late by stage 1: it is routed, not taken for a copy, and a
    /// copy of it written again after a crash is recognised by its id, also after a restore.
    @Test func aLateMessageIsRoutedAndACopyOfItRecognised() throws {
        let (stage, bob) = try Self.bobsRoute()
        var state = bob
        #expect(stage.fold(&state, .fanout(Self.directRecord("m2", at: 2))).commands.count == 1)
        #expect(stage.fold(&state, .fanout(Self.directRecord("m1", at: 1, late: true))).commands.count == 1)
        #expect(state.entries["bob"]?.badge == 2)
        // Copies, past the last event ids remembered: the late one by its id, the other by its time.
        for second in 3..<60 { _ = stage.fold(&state, .fanout(Self.directRecord("m\(second)", at: Int64(second)))) }
        for copy in [Self.directRecord("m1", at: 1, late: true), Self.directRecord("m2", at: 2)] {
            #expect(stage.fold(&state, .fanout(copy)).decisions.map(\.reason) == [.alreadyApplied])
        }
        #expect(state.entries["bob"]?.badge == 59)
        var restored = RouteState()
        try restored.restore("bob", state.snapshot("bob"), recentEventIds: [])
        let again = stage.fold(&restored, .fanout(Self.directRecord("m1", at: 1, late: true)))
        #expect(again.decisions.map(\.reason) == [.alreadyApplied])
        #expect(stage.fold(&restored, .fanout(Self.directRecord("m0", at: 0, late: true))).commands.count == 1)
    }

    /// `compared(to:)` (what the merge sorts by) agrees with `<` and `==` field by field: time,
    /// then topic, then key, then subkey, and ties only on all four.
    @Test func theOrderComparedInOnePassAgreesWithLessThan() {
        var orders: [EventOrder] = []
        for milliseconds: Int64 in [1, 2] {
            for topic in [Topic.devices, Topic.messages] {
                for key in ["c1", "c2", "é"] {
                    for subkey in ["", "u1", "u2"] {
                        orders.append(EventOrder(milliseconds: milliseconds, topic: topic, key: key, subkey: subkey))
                    }
                }
            }
        }
        for lhs in orders {
            for rhs in orders {
                let compared = lhs.compared(to: rhs)
                #expect((compared < 0) == (lhs < rhs))
                #expect((compared == 0) == (lhs == rhs))
                #expect((compared > 0) == (rhs < lhs))
            }
        }
        #expect(orders == orders.sorted(), "built in order: time, topic, key, subkey")
    }
}
