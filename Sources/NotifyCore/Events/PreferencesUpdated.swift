/// Whether notifications show what was said.
public enum PreviewSetting: String, Sendable, Hashable, Codable, CaseIterable {
    case always, never
}

/// `preferences.updated` on `chat.preferences` (key: user id).
public struct PreferencesUpdated: ChatEvent {
    public static let eventType = "preferences.updated"
    public static let topic = Topic.preferences
    public var id: String
    public var at: EventTime
    public var userId: String
    public var previews: PreviewSetting
    /// Muted conversations: until when, or `nil` for ever.
    public var muted: [String: EventTime?]
    public var key: String { userId }

    public init(id: String, at: EventTime, userId: String, previews: PreviewSetting, muted: [String: EventTime?] = [:])
    {
        self.id = id
        self.at = at
        self.userId = userId
        self.previews = previews
        self.muted = muted
    }

    public init(reading fields: FieldReader) throws(FieldError) {
        try fields.rejectUnknown(allowed: ["type", "id", "at", "userId", "previews", "muted"])
        id = try fields.string("id")
        at = try fields.time("at")
        userId = try fields.string("userId")
        previews = try fields.choice("previews")
        var muted: [String: EventTime?] = [:]
        if let mutedFields = try fields.optionalObject("muted") {
            for conversationId in mutedFields.keys {
                guard !conversationId.isEmpty else { throw mutedFields.error(conversationId, "empty conversation id") }
                if mutedFields.optionalValue(conversationId) == nil {
                    muted[conversationId] = .some(nil)
                } else {
                    muted[conversationId] = .some(try mutedFields.time(conversationId))
                }
            }
        }
        self.muted = muted
    }

    /// Whether `conversationId` is muted at `time`.
    public func isMuted(_ conversationId: String, at time: EventTime) -> Bool {
        guard let until = muted[conversationId] else { return false }
        guard let until else { return true }
        return time < until
    }

    public var jsonValue: JSONValue {
        var object = envelope(capacity: 6)
        object["userId"] = .string(userId)
        object["previews"] = .string(previews.rawValue)
        object["muted"] = .object(muted.mapValues { $0.map { .string($0.rfc3339) } ?? .null })
        return object.value
    }
}
