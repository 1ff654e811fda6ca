/// `identity.deleted` on `chat.identities` (key: user id).
public struct IdentityDeleted: ChatEvent {
    public static let eventType = "identity.deleted"
    public static let topic = Topic.identities
    public var id: String
    public var at: EventTime
    public var userId: String
    public var key: String { userId }

    public init(id: String, at: EventTime, userId: String) {
        self.id = id
        self.at = at
        self.userId = userId
    }

    public init(reading fields: FieldReader) throws(FieldError) {
        try fields.rejectUnknown(allowed: ["type", "id", "at", "userId"])
        id = try fields.string("id")
        at = try fields.time("at")
        userId = try fields.string("userId")
    }

    public var jsonValue: JSONValue {
        var object = envelope(capacity: 4)
        object["userId"] = .string(userId)
        return object.value
    }
}
