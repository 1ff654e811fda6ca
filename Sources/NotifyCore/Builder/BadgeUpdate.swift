/// A background push that sets the badge and clears delivered notifications
/// of the conversations that were read (rule 12).
public struct BadgeUpdate: Sendable, Hashable, Codable, JSONRepresentable {
    /// The recipient's new unread total.
    public var badge: Int
    /// The threads (conversation ids) whose delivered notifications the app removes, sorted.
    public var clearThreadIds: [String]

    public init(badge: Int, clearThreadIds: [String]) {
        self.badge = badge
        self.clearThreadIds = clearThreadIds
    }

    public var jsonValue: JSONValue {
        .object(["badge": .int(Int64(badge)), "clearThreadIds": .array(clearThreadIds.map(JSONValue.string))])
    }
}
