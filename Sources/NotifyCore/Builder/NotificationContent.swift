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
    private var storage: CopyOnWrite<Members>

    /// The recipient's unread total; set by the route stage. Kept beside the
    /// shared members: stage 2 sets it on every content it routes, which
    /// would otherwise copy all of them.
    public var badge: Int?

    private struct Members: Sendable, Hashable, Codable {
        var title: String
        var subtitle: String?
        var body: String
        var threadId: String
        var category: String
        var userInfo: NotificationUserInfo
        var sender: SenderIdentity
        var conversation: ConversationIdentity
        var kind: MessageKind
        var attachment: Attachment?
        var identityResolved: Bool
    }

    public var title: String {
        get { storage.members.title }
        set { storage.update { $0.title = newValue } }
    }

    public var subtitle: String? {
        get { storage.members.subtitle }
        set { storage.update { $0.subtitle = newValue } }
    }

    public var body: String {
        get { storage.members.body }
        set { storage.update { $0.body = newValue } }
    }

    /// Groups the notifications of one conversation (`thread-id`).
    public var threadId: String {
        get { storage.members.threadId }
        set { storage.update { $0.threadId = newValue } }
    }

    /// The category id in `Schemas/categories.json` (`message`).
    public var category: String {
        get { storage.members.category }
        set { storage.update { $0.category = newValue } }
    }

    public var userInfo: NotificationUserInfo {
        get { storage.members.userInfo }
        set { storage.update { $0.userInfo = newValue } }
    }

    public var sender: SenderIdentity {
        get { storage.members.sender }
        set { storage.update { $0.sender = newValue } }
    }

    public var conversation: ConversationIdentity {
        get { storage.members.conversation }
        set { storage.update { $0.conversation = newValue } }
    }

    /// What kind of message this is; says what was sent when an attachment is dropped.
    public var kind: MessageKind {
        get { storage.members.kind }
        set { storage.update { $0.kind = newValue } }
    }

    public var attachment: Attachment? {
        get { storage.members.attachment }
        set { storage.update { $0.attachment = newValue } }
    }

    /// `false` while the sender's identity was not known (rule 9).
    public var identityResolved: Bool {
        get { storage.members.identityResolved }
        set { storage.update { $0.identityResolved = newValue } }
    }

    public init(
        title: String, subtitle: String?, body: String, threadId: String, category: String,
        userInfo: NotificationUserInfo, sender: SenderIdentity, conversation: ConversationIdentity,
        kind: MessageKind, attachment: Attachment?, badge: Int? = nil, identityResolved: Bool
    ) {
        storage = CopyOnWrite(
            Members(
                title: title, subtitle: subtitle, body: body, threadId: threadId, category: category,
                userInfo: userInfo,
                sender: sender, conversation: conversation, kind: kind, attachment: attachment,
                identityResolved: identityResolved))
        self.badge = badge
    }

    private enum BadgeCodingKeys: String, CodingKey {
        case badge
    }

    public init(from decoder: any Decoder) throws {
        storage = CopyOnWrite(try Members(from: decoder))
        badge = try decoder.container(keyedBy: BadgeCodingKeys.self).decodeIfPresent(Int.self, forKey: .badge)
    }

    public func encode(to encoder: any Encoder) throws {
        try storage.members.encode(to: encoder)
        var container = encoder.container(keyedBy: BadgeCodingKeys.self)
        try container.encodeIfPresent(badge, forKey: .badge)
    }

    public var jsonValue: JSONValue {
        var object = JSONObjectBuilder(capacity: 12)
        object["title"] = .string(title)
        object.set("subtitle", subtitle)
        object["body"] = .string(body)
        object["threadId"] = .string(threadId)
        object["category"] = .string(category)
        object["userInfo"] = userInfo.jsonValue
        object["sender"] = sender.jsonValue
        object["conversation"] = conversation.jsonValue
        object["kind"] = .string(kind.rawValue)
        object["attachment"] = attachment?.jsonValue
        object["badge"] = badge.map { .int(Int64($0)) }
        object["identityResolved"] = .bool(identityResolved)
        return object.value
    }

    /// Writes the JSON form (the bytes of ``jsonValue``), the identity parts spliced from `identity`.
    func write(to writer: inout JSONWriter, identity: IdentityJSON) {
        writer.writeObject { writer, first in
            // Members in sorted key order.
            if let attachment {
                writer.constantKey("attachment", &first)
                attachment.write(to: &writer)
            }
            if let badge { writer.member("badge", Int64(badge), &first) }
            writer.member("body", body, &first)
            writer.member("category", category, &first)
            writer.member("conversation", identity.conversation, &first)
            writer.member("identityResolved", identityResolved, &first)
            writer.member("kind", kind.rawValue, &first)
            writer.member("sender", identity.sender, &first)
            writer.member("subtitle", subtitle, &first)
            writer.member("threadId", threadId, &first)
            writer.member("title", title, &first)
            writer.member("userInfo", identity.userInfo, &first)
        }
    }

    init(reading fields: FieldReader) throws(FieldError) {
        try fields.rejectUnknown(allowed: [
            "title", "subtitle", "body", "threadId", "category", "userInfo", "sender",
            "conversation", "kind", "attachment", "badge", "identityResolved",
        ])
        let title = try fields.string("title")
        let subtitle = try fields.optionalString("subtitle")
        let body = try fields.string("body")
        let threadId = try fields.string("threadId")
        let category = try fields.string("category")
        let userInfo = try NotificationUserInfo(reading: fields.object("userInfo"))
        let sender = try SenderIdentity(reading: fields.object("sender"))
        let conversation = try ConversationIdentity(reading: fields.object("conversation"))
        let kind: MessageKind = try fields.choice("kind")
        let attachment = try fields.optionalObject("attachment").map { (reader) throws(FieldError) in
            try Attachment(reading: reader)
        }
        let badge = try fields.optionalInteger("badge", minimum: 0).map { Int($0) }
        guard case .bool(let resolved)? = fields.optionalValue("identityResolved") else {
            throw fields.error("identityResolved", "expected a boolean")
        }
        self.init(
            title: title, subtitle: subtitle, body: body, threadId: threadId, category: category, userInfo: userInfo,
            sender: sender, conversation: conversation, kind: kind, attachment: attachment, badge: badge,
            identityResolved: resolved)
    }
}

/// The JSON bytes of the parts of a content that every rendering carries
/// unchanged (sender, conversation, userInfo), written once per message and
/// recipient and spliced into all its renderings.
struct IdentityJSON: Sendable {
    let sender: EncodedJSON
    let conversation: EncodedJSON
    let userInfo: EncodedJSON
    /// `sender` and `conversation` as JSON strings, for FCM's string-only data.
    let senderString: EncodedJSON
    let conversationString: EncodedJSON

    init(_ content: NotificationContent) {
        // All five, one after the other in one buffer.
        var writer = JSONWriter(capacity: 1000)
        let sender = writer.writtenRange { content.sender.write(to: &$0) }
        let conversation = writer.writtenRange { content.conversation.write(to: &$0) }
        let userInfo = writer.writtenRange { content.userInfo.write(to: &$0) }
        let senderString = writer.writtenRange { $0.writeString(ofWritten: sender) }
        let conversationString = writer.writtenRange { $0.writeString(ofWritten: conversation) }
        let written = writer.finish()
        self.sender = EncodedJSON(written, sender)
        self.conversation = EncodedJSON(written, conversation)
        self.userInfo = EncodedJSON(written, userInfo)
        self.senderString = EncodedJSON(written, senderString)
        self.conversationString = EncodedJSON(written, conversationString)
    }
}

extension SenderIdentity {
    /// Writes the bytes of ``jsonValue``.
    func write(to writer: inout JSONWriter) {
        writer.writeObject { writer, first in
            writer.member("displayName", displayName, &first)
            writer.member("handle", handle, &first)
            writer.member("id", id, &first)
            writer.member("imageURL", imageURL, &first)
        }
    }
}

extension ConversationIdentity {
    /// Writes the bytes of ``jsonValue``.
    func write(to writer: inout JSONWriter) {
        writer.writeObject { writer, first in
            writer.member("id", id, &first)
            writer.member("imageURL", imageURL, &first)
            writer.member("isGroup", isGroup, &first)
            writer.member("name", name, &first)
        }
    }
}

extension NotificationUserInfo {
    /// Writes the bytes of ``jsonValue``.
    func write(to writer: inout JSONWriter) {
        writer.writeObject { writer, first in
            writer.member("message-id", messageId, &first)
            writer.member("sender-id", senderId, &first)
            writer.member("talkroom-id", talkroomId, &first)
        }
    }
}

extension Attachment {
    /// Writes the bytes of ``jsonValue``.
    func write(to writer: inout JSONWriter) {
        writer.writeObject { writer, first in
            writer.member("bytes", bytes, &first)
            writer.member("mimeType", mimeType, &first)
            writer.member("url", url, &first)
        }
    }
}

// MARK: Reading the layout the writers above write

// Each reads what its `write(to:)` writes, as one step of ``FanoutRecord/init(canonical:)``, and
// accepts only what its `init(reading:)` accepts; `nil` for anything else.

extension NotificationContent {
    init?(canonical parser: inout JSONParser) {
        var attachment: Attachment?
        var badge: Int64?
        var subtitle: String?
        guard parser.skip("{"),
            parser.readOptional("\"attachment\":", into: &attachment, { Attachment(canonical: &$0) }, then: ","),
            parser.readOptional(
                "\"badge\":", into: &badge, { $0.readInteger().flatMap { $0 >= 0 ? $0 : nil } }, then: ","),
            parser.skip("\"body\":"), let body = parser.readNonEmptyString(),
            parser.skip(",\"category\":"), let category = parser.readNonEmptyString(),
            parser.skip(",\"conversation\":"), let conversation = ConversationIdentity(canonical: &parser),
            parser.skip(",\"identityResolved\":"), let identityResolved = parser.readBool(),
            parser.skip(",\"kind\":"), let kind = parser.readString().flatMap(MessageKind.init(rawValue:)),
            parser.skip(",\"sender\":"), let sender = SenderIdentity(canonical: &parser),
            parser.readOptional(",\"subtitle\":", into: &subtitle, { $0.readNonEmptyString() }),
            parser.skip(",\"threadId\":"), let threadId = parser.readNonEmptyString(),
            parser.skip(",\"title\":"), let title = parser.readNonEmptyString(),
            parser.skip(",\"userInfo\":"), let userInfo = NotificationUserInfo(canonical: &parser),
            parser.skip("}")
        else { return nil }
        self.init(
            title: title, subtitle: subtitle, body: body, threadId: threadId, category: category, userInfo: userInfo,
            sender: sender, conversation: conversation, kind: kind, attachment: attachment,
            badge: badge.map { Int($0) },
            identityResolved: identityResolved)
    }
}

extension SenderIdentity {
    init?(canonical parser: inout JSONParser) {
        var handle: String?
        var imageURL: String?
        guard parser.skip("{\"displayName\":"), let displayName = parser.readNonEmptyString(),
            parser.readOptional(",\"handle\":", into: &handle, { $0.readNonEmptyString() }),
            parser.skip(",\"id\":"), let id = parser.readNonEmptyString(),
            parser.readOptional(",\"imageURL\":", into: &imageURL, { $0.readURL() }),
            parser.skip("}")
        else { return nil }
        self.init(id: id, displayName: displayName, handle: handle, imageURL: imageURL)
    }
}

extension ConversationIdentity {
    init?(canonical parser: inout JSONParser) {
        var imageURL: String?
        var name: String?
        guard parser.skip("{\"id\":"), let id = parser.readNonEmptyString(),
            parser.readOptional(",\"imageURL\":", into: &imageURL, { $0.readURL() }),
            parser.skip(",\"isGroup\":"), let isGroup = parser.readBool(),
            parser.readOptional(",\"name\":", into: &name, { $0.readNonEmptyString() }),
            parser.skip("}")
        else { return nil }
        self.init(id: id, isGroup: isGroup, name: name, imageURL: imageURL)
    }
}

extension NotificationUserInfo {
    init?(canonical parser: inout JSONParser) {
        guard parser.skip("{\"message-id\":"), let messageId = parser.readNonEmptyString(),
            parser.skip(",\"sender-id\":"), let senderId = parser.readNonEmptyString(),
            parser.skip(",\"talkroom-id\":"), let talkroomId = parser.readNonEmptyString(),
            parser.skip("}")
        else { return nil }
        self.init(talkroomId: talkroomId, messageId: messageId, senderId: senderId)
    }
}

extension Attachment {
    init?(canonical parser: inout JSONParser) {
        guard parser.skip("{\"bytes\":"), let bytes = parser.readInteger(), bytes >= 0,
            parser.skip(",\"mimeType\":"), let mimeType = parser.readNonEmptyString(),
            mimeType.unicodeScalars.count <= Self.maximumMIMETypeLength, Self.hasMIMETypeForm(mimeType),
            parser.skip(",\"url\":"), let url = parser.readURL(),
            parser.skip("}")
        else { return nil }
        self.init(url: url, mimeType: mimeType, bytes: bytes)
    }
}

extension JSONParser {
    /// A string that is a valid URL field (see ``FieldReader/isURLField(_:)``).
    mutating func readURL() -> String? {
        guard let string = readString(), FieldReader.isURLField(string) else { return nil }
        return string
    }
}
