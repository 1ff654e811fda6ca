/// `conversation.updated` on `chat.conversations` (key: conversation id).
public struct ConversationUpdated: ChatEvent {
    public static let eventType = "conversation.updated"
    public static let topic = Topic.conversations

    /// A one-to-one or a group conversation.
    public enum Kind: String, Sendable, Hashable, Codable, CaseIterable {
        case direct, group
    }

    public var id: String
    public var at: EventTime
    public var conversationId: String
    public var kind: Kind
    public var name: String?
    public var imageURL: String?
    public var members: [String]
    public var key: String { conversationId }

    public init(
        id: String, at: EventTime, conversationId: String, kind: Kind, name: String? = nil, imageURL: String? = nil,
        members: [String]
    ) {
        self.id = id
        self.at = at
        self.conversationId = conversationId
        self.kind = kind
        self.name = name
        self.imageURL = imageURL
        self.members = members
    }

    public init(reading fields: FieldReader) throws(FieldError) {
        try fields.rejectUnknown(allowed: ["type", "id", "at", "conversationId", "kind", "name", "imageURL", "members"])
        id = try fields.string("id")
        at = try fields.time("at")
        conversationId = try fields.string("conversationId")
        kind = try fields.choice("kind")
        name = try fields.optionalString("name", maxLength: 256)
        imageURL = try fields.optionalURL("imageURL")
        members = try fields.stringSet("members", minimumCount: 1)
    }

    public var jsonValue: JSONValue {
        var object = envelope(capacity: 8)
        object["conversationId"] = .string(conversationId)
        object["kind"] = .string(kind.rawValue)
        object.set("name", name)
        object.set("imageURL", imageURL)
        object["members"] = .array(members.map(JSONValue.string))
        return object.value
    }
}
