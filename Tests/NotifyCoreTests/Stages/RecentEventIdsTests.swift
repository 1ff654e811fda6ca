import Testing

@testable import NotifyCore

@Suite struct RecentEventIdsTests {
    /// The window keeps the last ``RecentEventIds/limit`` ids, oldest first, and recognises those only,
    /// across the ring's wrap and through its changelog form.
    @Test func theWindowKeepsTheLastIdsOldestFirst() {
        var recent = RecentEventIds()
        let all = (0..<(RecentEventIds.limit + 9)).map { "event-\($0)" }
        for id in all { recent.insert(id) }
        let kept = Array(all.suffix(RecentEventIds.limit))
        #expect(recent.ids == kept)
        #expect(kept.allSatisfy(recent.contains))
        #expect(!all.prefix(9).contains(where: recent.contains), "the oldest 9 were overwritten")
        #expect(!recent.contains("event-unknown"))
        let restored = RecentEventIds(recent.ids)
        #expect(restored == recent)
        #expect(restored.ids == kept)
    }

    /// Before the ring is full, the ids are kept in the order they came.
    @Test func aWindowNotFullKeepsEveryId() {
        var recent = RecentEventIds(["a", "b"])
        recent.insert("c")
        #expect(recent.ids == ["a", "b", "c"])
        #expect(recent.contains("a") && recent.contains("c"))
        #expect(RecentEventIds(Array(["x", "a", "b", "c"].suffix(3))) == recent)
    }
}
