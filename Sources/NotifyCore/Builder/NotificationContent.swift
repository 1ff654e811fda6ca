/// Who sent a message, as every rendering shows it. The client builds its
/// `INPerson` from it (customIdentifier = `id`), so it is built once per message.
public struct SenderIdentity: Sendable, Hashable, Codable, JSONRepresentable {
    public var id: String
    public var displayName: String
    public var handle: String?
    public var imageURL: String?

    public init(id: String, displayName: String, handle: String? = nil, imageURL: String? = nil) {
        self.id = id
        self.displayName = displayName
        self.handle = handle
        self.imageURL = imageURL
    }

    public var jsonValue: JSONValue {
        var object = JSONObjectBuilder(capacity: 4)
        object["id"] = .string(id)
        object["displayName"] = .string(displayName)
        object.set("handle", handle)
        object.set("imageURL", imageURL)
        return object.value
    }

    init(reading fields: FieldReader) throws(FieldError) {
        try fields.rejectUnknown(allowed: ["id", "displayName", "handle", "imageURL"])
        id = try fields.string("id")
        displayName = try fields.string("displayName")
        handle = try fields.optionalString("handle")
        imageURL = try fields.optionalURL("imageURL")
    }
}

/// The conversation a message belongs to, as every rendering shows it
/// (the client's conversationIdentifier = `id`).
public struct ConversationIdentity: Sendable, Hashable, Codable, JSONRepresentable {
    public var id: String
    public var isGroup: Bool
    public var name: String?
    public var imageURL: String?

    public init(id: String, isGroup: Bool, name: String? = nil, imageURL: String? = nil) {
        self.id = id
        self.isGroup = isGroup
        self.name = name
        self.imageURL = imageURL
    }

    public var jsonValue: JSONValue {
        var object = JSONObjectBuilder(capacity: 4)
        object["id"] = .string(id)
        object["isGroup"] = .bool(isGroup)
        object.set("name", name)
        object.set("imageURL", imageURL)
        return object.value
    }

    init(reading fields: FieldReader) throws(FieldError) {
        try fields.rejectUnknown(allowed: ["id", "isGroup", "name", "imageURL"])
        id = try fields.string("id")
        guard case .bool(let isGroup)? = fields.optionalValue("isGroup") else {
            throw fields.error("isGroup", "expected a boolean")
        }
        self.isGroup = isGroup
        name = try fields.optionalString("name")
        imageURL = try fields.optionalURL("imageURL")
    }
}

/// The keys the app reads when a notification is tapped; identical in every rendering.
public struct NotificationUserInfo: Sendable, Hashable, Codable, JSONRepresentable {
    public var talkroomId: String
    public var messageId: String
    public var senderId: String

    enum CodingKeys: String, CodingKey {
        case talkroomId = "talkroom-id"
        case messageId = "message-id"
        case senderId = "sender-id"
    }

    public init(talkroomId: String, messageId: String, senderId: String) {
        self.talkroomId = talkroomId
        self.messageId = messageId
        self.senderId = senderId
    }

    /// The members as (key, value) pairs, in the order they are written.
    var pairs: [(String, String)] {
        [("talkroom-id", talkroomId), ("message-id", messageId), ("sender-id", senderId)]
    }

    public var jsonValue: JSONValue {
        .object(["talkroom-id": .string(talkroomId), "message-id": .string(messageId), "sender-id": .string(senderId)])
    }

    init(reading fields: FieldReader) throws(FieldError) {
        try fields.rejectUnknown(allowed: ["talkroom-id", "message-id", "sender-id"])
        talkroomId = try fields.string("talkroom-id")
        messageId = try fields.string("message-id")
        senderId = try fields.string("sender-id")
    }
}

/// What one notification about one message says to one recipient: built once
/// per message and recipient, then embedded unchanged (apart from the body's
/// length and a refused attachment) by the APNs, FCM and local renderings.
public struct NotificationContent: Sendable, Hashable, Codable, JSONRepresentable {
    public var title: String
    public var subtitle: String?
    public var body: String
    /// Groups the notifications of one conversation (`thread-id`).
    public var threadId: String
    /// The category id in `Schemas/categories.json` (`message`).
    public var category: String
    public var userInfo: NotificationUserInfo
    public var sender: SenderIdentity
    public var conversation: ConversationIdentity
    /// What kind of message this is; says what was sent when an attachment is dropped.
    public var kind: MessageKind
    public var attachment: Attachment?
    /// The recipient's unread total; set by the route stage.
    public var badge: Int?
    /// `false` while the sender's identity was not known (rule 9).
    public var identityResolved: Bool

    public init(
        title: String, subtitle: String?, body: String, threadId: String, category: String,
        userInfo: NotificationUserInfo, sender: SenderIdentity, conversation: ConversationIdentity,
        kind: MessageKind, attachment: Attachment?, badge: Int? = nil, identityResolved: Bool
    ) {
        self.title = title
        self.subtitle = subtitle
        self.body = body
        self.threadId = threadId
        self.category = category
        self.userInfo = userInfo
        self.sender = sender
        self.conversation = conversation
        self.kind = kind
        self.attachment = attachment
        self.badge = badge
        self.identityResolved = identityResolved
    }

    public var jsonValue: JSONValue {
        jsonValue(identity: IdentityJSON(self))
    }

    /// The JSON form, with the identity parts already built.
    func jsonValue(identity: IdentityJSON) -> JSONValue {
        var object = JSONObjectBuilder(capacity: 12)
        object["title"] = .string(title)
        object.set("subtitle", subtitle)
        object["body"] = .string(body)
        object["threadId"] = .string(threadId)
        object["category"] = .string(category)
        object["userInfo"] = identity.userInfo
        object["sender"] = identity.sender
        object["conversation"] = identity.conversation
        object["kind"] = .string(kind.rawValue)
        object["attachment"] = attachment?.jsonValue
        object["badge"] = badge.map { .int(Int64($0)) }
        object["identityResolved"] = .bool(identityResolved)
        return object.value
    }

    init(reading fields: FieldReader) throws(FieldError) {
        try fields.rejectUnknown(allowed: ["title", "subtitle", "body", "threadId", "category", "userInfo", "sender",
                                           "conversation", "kind", "attachment", "badge", "identityResolved"])
        title = try fields.string("title")
        subtitle = try fields.optionalString("subtitle")
        body = try fields.string("body")
        threadId = try fields.string("threadId")
        category = try fields.string("category")
        userInfo = try NotificationUserInfo(reading: fields.object("userInfo"))
        sender = try SenderIdentity(reading: fields.object("sender"))
        conversation = try ConversationIdentity(reading: fields.object("conversation"))
        kind = try fields.choice("kind")
        attachment = try fields.optionalObject("attachment").map { (reader) throws(FieldError) in try Attachment(reading: reader) }
        badge = try fields.optionalInteger("badge", minimum: 0).map { Int($0) }
        guard case .bool(let resolved)? = fields.optionalValue("identityResolved") else {
            throw fields.error("identityResolved", "expected a boolean")
        }
        identityResolved = resolved
    }
}

/// The JSON of the parts of a content that every rendering carries
/// unchanged (sender, conversation, userInfo), built once per message and
/// recipient and shared by all its renderings.
struct IdentityJSON: Sendable {
    let sender: JSONValue
    let conversation: JSONValue
    let userInfo: JSONValue
    /// `sender` and `conversation` as JSON text, for FCM's string-only data.
    let senderText: String
    let conversationText: String

    init(_ content: NotificationContent) {
        sender = content.sender.jsonValue
        conversation = content.conversation.jsonValue
        userInfo = content.userInfo.jsonValue
        senderText = CoreJSON.text(sender)
        conversationText = CoreJSON.text(conversation)
    }
}
