import Testing

@testable import NotifyCore

@Suite struct RouteStageTests {
    let configuration: CoreConfiguration
    let stage: RouteStage

    init() throws {
        var configuration = try Repository.configuration()
        configuration.backgroundPushIntervalMilliseconds = 60_000  // The timings below are in minutes.
        self.configuration = configuration
        stage = RouteStage(configuration: configuration)
    }

    func record(_ messageId: String, in conversationId: String = "c1", at seconds: Double) -> FanoutRecord {
        EventFactory.record(messageId, in: conversationId, for: "bob", at: seconds, configuration: configuration)
    }

    func state(devices: [Device], clients: [ClientStateChanged] = [], events: inout EventFactory) -> RouteState {
        var state = RouteState()
        _ = stage.fold(&state, .devices(events.devices("bob", devices)))
        for client in clients { _ = stage.fold(&state, .clientState(client)) }
        return state
    }

    @Test func eachDeviceGetsThePathItsClientStateCallsFor() {
        var events = EventFactory()
        let devices = ["room", "otherRoom", "tabbar", "profile", "background", "stale", "unknown"].map {
            EventFactory.iPhone($0)
        }
        var state = state(
            devices: devices,
            clients: [
                events.client("bob", "room", .foreground, .init(kind: .talkroom, conversationId: "c1"), at: 50),
                events.client("bob", "otherRoom", .foreground, .init(kind: .talkroom, conversationId: "c9"), at: 50),
                events.client("bob", "tabbar", .foreground, .init(kind: .tabbar), at: 50),
                events.client("bob", "profile", .foreground, .init(kind: .profile), at: 50),
                events.client("bob", "background", .background, at: 50),
                events.client("bob", "stale", .foreground, .init(kind: .profile), at: 0),
            ], events: &events)
        let output = stage.fold(&state, .fanout(record("m1", at: 301)))
        let paths = Dictionary(uniqueKeysWithValues: output.commands.map { ($0.recipient.deviceId, $0.path) })
        #expect(
            paths == ["otherRoom": .local, "profile": .local, "background": .push, "stale": .push, "unknown": .push])
        let reasons = Dictionary(uniqueKeysWithValues: output.decisions.map { ($0.deviceId!, $0.reason) })
        #expect(reasons == ["room": .foregroundInConversation, "tabbar": .foregroundTabBar])
        #expect(
            output.commands.allSatisfy {
                ($0.path == .local) == ($0.local != nil) && ($0.path == .push) == ($0.apns != nil)
            })
    }

    @Test func theBadgeCountsUnreadMessagesIncludingMutedOnesAndAReadLowersIt() throws {
        var events = EventFactory()
        var state = state(devices: [EventFactory.iPhone("phone")], events: &events)
        _ = stage.fold(
            &state,
            .preferences(
                PreferencesUpdated(
                    id: "p", at: EventFactory.time(0), userId: "bob", previews: .always, muted: ["c2": nil])))
        _ = stage.fold(&state, .fanout(record("m1", in: "c1", at: 1)))
        let muted = stage.fold(&state, .fanout(record("m2", in: "c2", at: 2)))
        #expect(muted.commands.isEmpty)
        #expect(muted.decisions.map(\.reason) == [.muted])
        let third = stage.fold(&state, .fanout(record("m3", in: "c1", at: 3)))
        #expect(third.commands.first?.apns?.payload["aps"]?["badge"] == .int(3))

        let read = stage.fold(&state, .read(events.read("bob", "c1", at: 10)))
        let badge = try #require(read.commands.first)
        #expect(badge.apns?.payload["aps"] == .object(["badge": .int(1), "content-available": .int(1)]))
        #expect(badge.apns?.headers["apns-push-type"] == "background")
        #expect(badge.apns?.headers["apns-priority"] == "5")
        #expect(badge.apns?.payload["clear-thread-ids"] == .array([.string("c1")]))
        #expect(state.entries["bob"]?.badge == 1)
    }

    @Test func backgroundPushesAreRateLimitedAndCoalescedUntilTimeMovesOn() throws {
        var events = EventFactory()
        var state = state(devices: [EventFactory.pixel("pixel")], events: &events)
        for (index, conversation) in ["c1", "c2", "c3"].enumerated() {
            _ = stage.fold(&state, .fanout(record("m\(index)", in: conversation, at: Double(index))))
        }
        #expect(stage.fold(&state, .read(events.read("bob", "c1", at: 10))).commands.count == 1)
        let second = stage.fold(&state, .read(events.read("bob", "c2", at: 20)))
        let third = stage.fold(&state, .read(events.read("bob", "c3", at: 30)))
        #expect(second.commands.isEmpty && third.commands.isEmpty)
        #expect(
            (second.decisions + third.decisions).map(\.reason) == [.backgroundPushCoalesced, .backgroundPushCoalesced])
        #expect(stage.fold(&state, .clock(EventFactory.time(69.999))).commands.isEmpty)
        let released = stage.fold(&state, .clock(EventFactory.time(70)))
        let command = try #require(released.commands.first)
        #expect(released.commands.count == 1)
        #expect(command.at == EventFactory.time(70).rfc3339)
        let data = command.fcm?.message["data"]
        #expect(data?["badge"] == .string("0"))
        #expect(data?["clear-thread-ids"] == .string(#"["c2","c3"]"#))
        #expect(command.fcm?.message["notification"] == nil)
        #expect(
            command.id == DeterministicID.commandId(source: "ev4", deviceId: "pixel", path: .push),
            "the coalesced push takes its id from the latest read")
    }

    @Test func anInvalidTokenIsBlockedUntilTheDeviceListChanges() {
        var events = EventFactory()
        var state = state(devices: [EventFactory.iPhone("phone")], events: &events)
        let outcome = NotificationOutcome(
            id: "o", at: EventFactory.time(1).rfc3339, commandId: "x", sink: "apns",
            recipient: Recipient(userId: "bob", deviceId: "phone", platform: .ios, provider: .apns),
            conversationId: nil, messageId: nil, outcome: .tokenInvalid, reason: "BadDeviceToken")
        _ = stage.fold(&state, .outcome(outcome))
        let blocked = stage.fold(&state, .fanout(record("m1", at: 2)))
        #expect(blocked.commands.isEmpty)
        #expect(blocked.decisions.map(\.reason) == [.tokenInvalid])
        _ = stage.fold(&state, .devices(events.devices("bob", [EventFactory.iPhone("phone")], at: 3)))
        #expect(stage.fold(&state, .fanout(record("m2", at: 4))).commands.count == 1)
    }

    @Test func aLocalDeliveryTheAppCouldNotShowGoesOutAgainOnThePushPath() throws {
        var events = EventFactory()
        var state = state(
            devices: [EventFactory.iPhone("phone")],
            clients: [events.client("bob", "phone", .foreground, .init(kind: .settings))], events: &events)
        let local = try #require(stage.fold(&state, .fanout(record("m1", at: 1))).commands.first)
        #expect(local.path == .local)
        let outcome = NotificationOutcome(
            id: "o", at: EventFactory.time(2).rfc3339, commandId: local.id, sink: "inapp",
            recipient: local.recipient, conversationId: "c1", messageId: "m1", outcome: .undeliverableLocal)
        let again = try #require(stage.fold(&state, .outcome(outcome)).commands.first)
        #expect(again.path == .push)
        #expect(again.id == DeterministicID.commandId(source: "m1", deviceId: "phone", path: .push))
        #expect(again.content == local.content)
        #expect(again.apns?.payload["aps"]?["alert"]?["body"] == .string("hi"))
        #expect(stage.fold(&state, .outcome(outcome)).commands.isEmpty, "a repeated outcome does not send twice")
    }

    @Test func onlyTheLatestLocalDeliveriesCanGoOutAgain() throws {
        var configuration = configuration
        configuration.recentLocalLimit = 2
        let stage = RouteStage(configuration: configuration)
        var events = EventFactory()
        var state = RouteState()
        _ = stage.fold(&state, .devices(events.devices("bob", [EventFactory.iPhone("phone")])))
        _ = stage.fold(&state, .clientState(events.client("bob", "phone", .foreground, .init(kind: .settings))))
        let locals = try (1...3).map {
            try #require(stage.fold(&state, .fanout(record("m\($0)", at: Double($0)))).commands.first)
        }
        #expect(state.entries["bob"]?.recentLocal.map(\.commandId) == locals.suffix(2).map(\.id))
        func undeliverable(_ local: NotificationCommand) -> NotificationOutcome {
            NotificationOutcome(
                id: "o-\(local.id)", at: EventFactory.time(10).rfc3339, commandId: local.id, sink: "inapp",
                recipient: local.recipient, conversationId: "c1", messageId: local.messageId,
                outcome: .undeliverableLocal)
        }
        #expect(stage.fold(&state, .outcome(undeliverable(locals[0]))).commands.isEmpty, "the oldest was forgotten")
        #expect(stage.fold(&state, .outcome(undeliverable(locals[2]))).commands.first?.path == .push)
    }

    @Test func aRestoredChangelogContinuesExactlyAsTheOriginal() throws {
        var events = EventFactory()
        var original = state(
            devices: [EventFactory.iPhone("phone"), EventFactory.pixel("pixel")],
            clients: [events.client("bob", "pixel", .foreground, .init(kind: .other))], events: &events)
        _ = stage.fold(&original, .fanout(record("m1", at: 1)))
        _ = stage.fold(&original, .read(events.read("bob", "c1", at: 2)))
        _ = stage.fold(&original, .fanout(record("m2", at: 3)))
        _ = stage.fold(&original, .read(events.read("bob", "c1", at: 4)))
        var restored = RouteState()
        for key in original.entries.keys {
            try restored.restore(key, original.snapshot(key))
        }
        #expect(!original.entries.isEmpty)
        #expect(restored.entries == original.entries)
        // A message and a read after the restore: both make commands, the same from either state.
        for input in [RouteInput.fanout(record("m3", at: 100)), .read(events.read("bob", "c1", at: 200))] {
            let continued = stage.fold(&restored, input).commands
            #expect(!continued.isEmpty)
            #expect(continued == stage.fold(&original, input).commands)
        }
    }
}
