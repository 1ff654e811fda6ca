import Testing

@testable import NotifyCore

/// The per-key state written to the changelogs reads back exactly as it was written.
@Suite struct ChangelogEntryTests {
    @Test func aUserEntryWithEveryMemberReadsBackEqual() throws {
        var events = EventFactory()
        var entry = UserEntry()
        entry.devices = [EventFactory.iPhone("phone"), EventFactory.pixel("pixel")]
        entry.preferences = PreferencesUpdated(
            id: "p", at: EventFactory.time(1), userId: "bob", previews: .never,
            muted: ["c2": nil, "c3": EventFactory.time(99)])
        entry.clientStates = ["pixel": events.client("bob", "pixel", .foreground, .init(kind: .other))]
        entry.unread = ["c1": 2, "c2": 5]
        entry.invalidTokens = ["old-token"]
        entry.lastBackgroundPush = ["phone": EventFactory.time(3)]
        entry.pendingBadges = ["phone": .init(eventId: "r1", at: EventFactory.time(4), clearThreadIds: ["c1", "c2"])]
        entry.recentLocal = [
            .init(
                commandId: "cmd",
                record: EventFactory.record(
                    "m1", in: "c1", for: "bob", at: 2, configuration: try Repository.configuration()))
        ]
        entry.readUpTo = ["c3": EventFactory.time(5)]
        entry.latestMessages = ["c1": .init(at: EventFactory.time(6), messageIds: ["m6", "m7"])]
        entry.lateMessages = ["c1": ["m5": EventFactory.time(5.5)]]
        #expect(try UserEntry(changelog: CoreJSON.encode(entry)) == entry)
    }

    @Test func anEntryWrittenBeforeReadUpToExistedReadsBack() throws {
        let written =
            #"{"devices":[],"clientStates":{},"unread":{"c1":1},"invalidTokens":[],"lastBackgroundPush":{},"pendingBadges":{},"recentLocal":[]}"#
        let entry = try UserEntry(changelog: Array(written.utf8))
        #expect(entry.unread == ["c1": 1] && entry.readUpTo.isEmpty)
    }

    @Test func aConversationEntryWithHeldMessagesReadsBackEqual() throws {
        var events = EventFactory()
        let entry = ConversationEntry(
            conversation: events.conversation("c1", ["alice", "bob", "carol"], group: true),
            held: [
                events.message("m1", in: "c1", from: "dave", at: 1),
                events.message("m2", in: "c1", from: "alice", at: 2),
            ], latestAt: EventFactory.time(0.5))
        #expect(try ConversationEntry(changelog: CoreJSON.encode(entry)) == entry)
        #expect(try ConversationEntry(changelog: CoreJSON.encode(ConversationEntry())) == ConversationEntry())
    }

    @Test func aDamagedEntryIsRefusedWithTheField() {
        #expect(throws: FieldError.self) { try UserEntry(changelog: Array(#"{"devices":{}}"#.utf8)) }
    }
}
