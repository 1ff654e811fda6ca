/// What a message is.
public enum MessageKind: String, Sendable, Hashable, Codable, CaseIterable {
    case text, image, video, audio, sticker, file

    /// Whether a message of this kind must carry an attachment.
    public var requiresAttachment: Bool {
        switch self {
        case .image, .video, .audio, .file: true
        case .text, .sticker: false
        }
    }
}

/// A file attached to a message, as declared by the sender's client.
public struct Attachment: Sendable, Hashable, Codable {
    public var url: String
    public var mimeType: String
    public var bytes: Int64

    public init(url: String, mimeType: String, bytes: Int64) {
        self.url = url
        self.mimeType = mimeType
        self.bytes = bytes
    }

    init(reading fields: FieldReader) throws(FieldError) {
        try fields.rejectUnknown(allowed: ["url", "mimeType", "bytes"])
        url = try fields.url("url")
        mimeType = try fields.string("mimeType", maxLength: Self.maximumMIMETypeLength)
        guard Self.hasMIMETypeForm(mimeType) else {
            throw fields.error("mimeType", "\"\(mimeType)\" is not a MIME type such as image/jpeg")
        }
        bytes = try fields.integer("bytes", minimum: 0)
    }

    /// The most characters a MIME type may have.
    static let maximumMIMETypeLength = 255

    /// Whether `text` has the form `type/subtype`, without whitespace (its length checked apart).
    static func hasMIMETypeForm(_ text: String) -> Bool {
        guard let slash = text.firstIndex(of: "/") else { return false }
        return slash != text.startIndex && text.index(after: slash) != text.endIndex
            && !text.contains(where: { $0.isWhitespace })
    }

    var jsonValue: JSONValue {
        .object(["url": .string(url), "mimeType": .string(mimeType), "bytes": .int(bytes)])
    }
}

/// `message.received` on `chat.messages` (key: conversation id).
public struct MessageReceived: ChatEvent {
    public static let eventType = "message.received"
    public static let topic = Topic.messages
    public var id: String
    public var at: EventTime
    public var messageId: String
    public var conversationId: String
    public var senderId: String
    /// The sender's handle as the backend knew it when the message was sent;
    /// the fallback title while the identity is unknown (rule 9).
    public var senderHandle: String?
    public var kind: MessageKind
    public var text: String?
    public var attachment: Attachment?
    /// User ids mentioned in the message.
    public var mentions: [String]
    public var key: String { conversationId }

    public init(
        id: String, at: EventTime, messageId: String, conversationId: String, senderId: String,
        senderHandle: String? = nil, kind: MessageKind, text: String? = nil, attachment: Attachment? = nil,
        mentions: [String] = []
    ) {
        self.id = id
        self.at = at
        self.messageId = messageId
        self.conversationId = conversationId
        self.senderId = senderId
        self.senderHandle = senderHandle
        self.kind = kind
        self.text = text
        self.attachment = attachment
        self.mentions = mentions
    }

    public init(reading fields: FieldReader) throws(FieldError) {
        try fields.rejectUnknown(allowed: [
            "type", "id", "at", "messageId", "conversationId", "senderId", "senderHandle",
            "kind", "text", "attachment", "mentions",
        ])
        id = try fields.string("id")
        at = try fields.time("at")
        messageId = try fields.string("messageId")
        conversationId = try fields.string("conversationId")
        senderId = try fields.string("senderId")
        senderHandle = try fields.optionalString("senderHandle", maxLength: 256)
        kind = try fields.choice("kind")
        text = try fields.optionalText("text")
        attachment = try fields.optionalObject("attachment").map { (reader) throws(FieldError) in
            try Attachment(reading: reader)
        }
        mentions = try fields.optionalStringSet("mentions") ?? []
        if kind == .text, text?.isEmpty ?? true {
            throw fields.error("text", "required for a message of kind \"text\"")
        }
        if kind.requiresAttachment, attachment == nil {
            throw fields.error("attachment", "required for a message of kind \"\(kind.rawValue)\"")
        }
    }

    public var jsonValue: JSONValue {
        var object = envelope(capacity: 12)
        object["messageId"] = .string(messageId)
        object["conversationId"] = .string(conversationId)
        object["senderId"] = .string(senderId)
        object.set("senderHandle", senderHandle)
        object["kind"] = .string(kind.rawValue)
        object.set("text", text)
        object["attachment"] = attachment?.jsonValue
        if !mentions.isEmpty { object["mentions"] = .array(mentions.map(JSONValue.string)) }
        return object.value
    }
}
