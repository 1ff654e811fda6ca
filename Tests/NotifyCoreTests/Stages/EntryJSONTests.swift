import Foundation
import Testing

@testable import NotifyCore

@Suite struct EntryJSONTests {
    /// A user entry with every member there, keys that need escaping and keys whose order differs
    /// between bytes and characters.
    static func fullUserEntry() throws -> UserEntry {
        var events = EventFactory()
        let configuration = try Repository.configuration()
        var entry = UserEntry()
        entry.devices = [EventFactory.iPhone("ph\"one"), EventFactory.pixel("pixel")]
        entry.devices[1].locale = "pt-BR"
        entry.preferences = PreferencesUpdated(
            id: "p1", at: EventFactory.time(1), userId: "bob", previews: .never,
            muted: ["c-1": EventFactory.time(60), "c-2": nil])
        entry.clientStates = [
            "pixel": events.client("bob", "pixel", .foreground, .init(kind: .talkroom, conversationId: "c-1")),
            "ph\"one": events.client("bob", "ph\"one", .background),
        ]
        entry.unread = ["c-1": 3, "c-é": 1, "C-2": 7, "c\\3": 0]
        entry.invalidTokens = ["old-token", "tab\tbed"]
        entry.lastBackgroundPush = ["pixel": EventFactory.time(2.5)]
        entry.pendingBadges = [
            "pixel": UserEntry.PendingBadge(eventId: "r1", at: EventFactory.time(3), clearThreadIds: ["c-1", "c-2"])
        ]
        entry.recentLocal = [
            UserEntry.RecentLocal(
                commandId: "cmd-1",
                record: EventFactory.record("m1", in: "c-1", for: "bob", at: 4, configuration: configuration))
        ]
        entry.readUpTo = ["c-1": EventFactory.time(5), "c-2": EventFactory.time(6)]
        entry.latestMessages = [
            "c-1": UserEntry.LatestMessage(at: EventFactory.time(7), messageIds: ["m1", "m2"]),
            "c-9": UserEntry.LatestMessage(at: EventFactory.time(8), messageIds: ["m9"]),
        ]
        entry.lateMessages = ["c-1": ["m0": EventFactory.time(0.5), "m00": EventFactory.time(0.25)]]
        return entry
    }

    /// Saves write each changed user's entry straight from the struct: the bytes of its JSON value,
    /// which restores read back to the same entry.
    @Test func userEntriesAreWrittenAsTheirJSONValue() throws {
        var sparse = UserEntry()
        sparse.devices = [EventFactory.iPhone("phone")]
        for entry in [try Self.fullUserEntry(), sparse, UserEntry()] {
            let bytes = CoreJSON.encode(entry)
            #expect(bytes == CoreJSON.encode(entry.jsonValue))
            #expect(try UserEntry(changelog: bytes) == entry)
        }
    }

    /// The same for conversation entries, with and without a conversation, held messages and a latest time.
    @Test func conversationEntriesAreWrittenAsTheirJSONValue() throws {
        var events = EventFactory()
        let group = ConversationUpdated(
            id: "e1", at: EventFactory.time(0), conversationId: "c-1", kind: .group, name: "Team \"A\"",
            imageURL: "https://img.example/c.png", members: ["alice", "bob", "zoë"])
        let entries = [
            ConversationEntry(
                conversation: group, held: [events.message("m1", in: "c-1", from: "alice", at: 1)],
                latestAt: EventFactory.time(2)),
            ConversationEntry(conversation: events.conversation("c-2", ["alice", "bob"])),
            ConversationEntry(held: [events.message("m2", in: "c-3", from: "carol", at: 3, mentions: ["bob"])]),
            ConversationEntry(),
        ]
        for entry in entries {
            let bytes = CoreJSON.encode(entry)
            #expect(bytes == CoreJSON.encode(entry.jsonValue))
            #expect(try ConversationEntry(changelog: bytes) == entry)
        }
    }
}
