import Testing

@testable import NotifyPipeline

@Suite struct ChangelogValueTests {
    @Test func roundTripsEntryAndAppliedOffsets() throws {
        let value = ChangelogValue(
            entry: Array(#"{"held":[]}"#.utf8), applied: ["chat.messages": 41, "chat.conversations": 3],
            recent: ["e-1", "e-2"])
        let decoded = try ChangelogValue.decode(value.encoded())
        #expect(decoded == value)
    }

    @Test func roundTripsAnEmptyEntry() throws {
        let value = ChangelogValue(entry: nil, applied: ["notify.fanout": 7])
        #expect(try ChangelogValue.decode(value.encoded()) == value)
    }

    @Test func refusesAValueWithoutOffsets() {
        #expect(throws: ChangelogError.self) { try ChangelogValue.decode(Array(#"{"entry":null}"#.utf8)) }
    }
}
