/// `conversation.read` on `chat.reads` (key: user id).
public struct ConversationRead: ChatEvent {
    public static let eventType = "conversation.read"
    public static let topic = Topic.reads
    public var id: String
    public var at: EventTime
    public var userId: String
    public var conversationId: String
    public var key: String { userId }

    public init(id: String, at: EventTime, userId: String, conversationId: String) {
        self.id = id
        self.at = at
        self.userId = userId
        self.conversationId = conversationId
    }

    public init(reading fields: FieldReader) throws(FieldError) {
        try fields.rejectUnknown(allowed: ["type", "id", "at", "userId", "conversationId"])
        id = try fields.string("id")
        at = try fields.time("at")
        userId = try fields.string("userId")
        conversationId = try fields.string("conversationId")
    }

    public var jsonValue: JSONValue {
        var object = envelope(capacity: 5)
        object["userId"] = .string(userId)
        object["conversationId"] = .string(conversationId)
        return object.value
    }
}
