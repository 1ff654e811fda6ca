/// The value of a record on `notify.fanout` (key: `recipientId`): one message
/// for one recipient, with its content built by stage 1.
public struct FanoutRecord: Sendable, Hashable, Codable, JSONRepresentable {
    public static let eventType = "notification.fanout"

    /// The fields behind one reference: a record is copied into stage outputs,
    /// route inputs, prepared messages and remembered local deliveries, and
    /// a copy is then one reference instead of every string it holds.
    private let storage: CopyOnWrite<Fields>

    private struct Fields: Sendable, Hashable {
        var id: String
        var at: EventTime
        var recipientId: String
        var conversationId: String
        var messageId: String
        var notificationType: String
        var content: NotificationContent
        var releasedAt: EventTime?
        var late: Bool
    }

    /// Derived from (message id, recipient id).
    public var id: String { storage.members.id }
    /// Event time of the message.
    public var at: EventTime { storage.members.at }
    public var recipientId: String { storage.members.recipientId }
    public var conversationId: String { storage.members.conversationId }
    public var messageId: String { storage.members.messageId }
    /// The policy to apply (`message`, `mention`): a key of `Schemas/policies.json`.
    public var notificationType: String { storage.members.notificationType }
    public var content: NotificationContent { storage.members.content }
    /// For a message that was held back (waiting for its sender's identity, or behind one that was):
    /// the event time it was released at, the identity's time or the end of the wait. Stage 2 folds
    /// the record at that time, so the conversations that were not held flow past it in every run.
    public var releasedAt: EventTime? { storage.members.releasedAt }
    /// Stage 1 fanned the message out after a later one of its conversation (its producer wrote it
    /// later than `pipeline.lateness` behind): stage 2 routes it although that later one went first,
    /// and remembers it by id, so that a copy written again after a crash is recognised.
    public var late: Bool { storage.members.late }

    public var key: String { recipientId }

    public init(
        at: EventTime, recipientId: String, conversationId: String, messageId: String,
        notificationType: String, content: NotificationContent, releasedAt: EventTime? = nil, late: Bool = false
    ) {
        self.init(
            id: DeterministicID.fanoutId(messageId: messageId, recipientId: recipientId), at: at,
            recipientId: recipientId,
            conversationId: conversationId, messageId: messageId, notificationType: notificationType, content: content,
            releasedAt: releasedAt, late: late)
    }

    private init(
        id: String, at: EventTime, recipientId: String, conversationId: String, messageId: String,
        notificationType: String, content: NotificationContent, releasedAt: EventTime?, late: Bool
    ) {
        storage = CopyOnWrite(
            Fields(
                id: id, at: at, recipientId: recipientId, conversationId: conversationId,
                messageId: messageId, notificationType: notificationType, content: content,
                releasedAt: releasedAt, late: late))
    }

    public var jsonValue: JSONValue {
        var members: [String: JSONValue] = [
            "type": .string(Self.eventType), "id": .string(id), "at": .string(at.rfc3339),
            "recipientId": .string(recipientId), "conversationId": .string(conversationId),
            "messageId": .string(messageId), "notificationType": .string(notificationType),
            "content": content.jsonValue,
        ]
        if let releasedAt { members["releasedAt"] = .string(releasedAt.rfc3339) }
        if late { members["late"] = .bool(true) }
        return .object(members)
    }

    init(reading fields: FieldReader) throws(FieldError) {
        try fields.rejectUnknown(allowed: [
            "type", "id", "at", "recipientId", "conversationId", "messageId",
            "notificationType", "content", "releasedAt", "late",
        ])
        try fields.constant("type", Self.eventType)
        let late: Bool
        switch fields.optionalValue("late") {
        case nil: late = false
        case .bool(let flag)?: late = flag
        case _?: throw fields.error("late", "not a boolean")
        }
        try self.init(
            id: fields.string("id"), at: fields.time("at"), recipientId: fields.string("recipientId"),
            conversationId: fields.string("conversationId"), messageId: fields.string("messageId"),
            notificationType: fields.string("notificationType"),
            content: NotificationContent(reading: fields.object("content")),
            releasedAt: fields.optionalValue("releasedAt") == nil ? nil : fields.time("releasedAt"), late: late)
    }

    public init(from decoder: any Decoder) throws {
        let json = try JSONValue(from: decoder)
        do {
            try self.init(reading: FieldReader(json))
        } catch {
            throw DecodingError.dataCorrupted(
                .init(
                    codingPath: decoder.codingPath,
                    debugDescription: "\(Topic.fanout): field \"\(error.field)\": \(error.problem)"))
        }
    }

    public func encode(to encoder: any Encoder) throws {
        try jsonValue.encode(to: encoder)
    }
}

extension CoreJSON {
    /// The bytes of a fanout record: the same as `encode(record.jsonValue)`,
    /// written straight from the struct (keys in sorted order by construction),
    /// since stage 1 writes one per message and recipient.
    public static func encode(_ record: FanoutRecord) -> [UInt8] {
        var writer = JSONWriter(capacity: 1500)
        record.write(to: &writer)
        return writer.bytes
    }
}

extension FanoutRecord {
    /// Writes the bytes of `CoreJSON.encode(_:)` for a fanout record.
    func write(to writer: inout JSONWriter) {
        writer.writeObject { writer, first in
            writer.member("at", at.rfc3339, &first)
            writer.constantKey("content", &first)
            content.write(to: &writer, identity: IdentityJSON(content))
            writer.member("conversationId", conversationId, &first)
            writer.member("id", id, &first)
            if late { writer.member("late", true, &first) }
            writer.member("messageId", messageId, &first)
            writer.member("notificationType", notificationType, &first)
            writer.member("recipientId", recipientId, &first)
            if let releasedAt { writer.member("releasedAt", releasedAt.rfc3339, &first) }
            writer.member("type", FanoutRecord.eventType, &first)
        }
    }
}

extension FanoutRecord {
    /// Reads a record laid out exactly as `CoreJSON.encode(_:)` writes one (members in sorted
    /// order, no whitespace, absent optionals left out), in one pass; `nil` for anything else, which
    /// ``InputEvent/decode(topic:value:)`` then reads the general way, to the same record or to the
    /// error. Stage 2 reads one record per message and recipient, nearly all written by stage 1, and
    /// the general way spent half its decoding time on member lists the layout makes needless.
    init?(canonical input: UnsafeBufferPointer<UInt8>) {
        var parser = JSONParser(input)
        guard parser.skip("{\"at\":"), let at = parser.readTime(),
            parser.skip(",\"content\":"), let content = NotificationContent(canonical: &parser),
            parser.skip(",\"conversationId\":"), let conversationId = parser.readNonEmptyString(),
            parser.skip(",\"id\":"), let id = parser.readNonEmptyString()
        else { return nil }
        let late = parser.skip(",\"late\":true")
        var releasedAt: EventTime?
        guard parser.skip(",\"messageId\":"), let messageId = parser.readNonEmptyString(),
            parser.skip(",\"notificationType\":"), let notificationType = parser.readNonEmptyString(),
            parser.skip(",\"recipientId\":"), let recipientId = parser.readNonEmptyString(),
            parser.readOptional(",\"releasedAt\":", into: &releasedAt, { $0.readTime() }),
            parser.skip(",\"type\":\"notification.fanout\"}"), parser.isAtEnd
        else { return nil }
        self.init(
            id: id, at: at, recipientId: recipientId, conversationId: conversationId, messageId: messageId,
            notificationType: notificationType, content: content, releasedAt: releasedAt, late: late)
    }
}

extension JSONParser {
    /// A string that is not empty, as ``FieldReader/string(_:maxLength:)`` requires.
    mutating func readNonEmptyString() -> String? {
        guard let string = readString(), !string.isEmpty else { return nil }
        return string
    }

    /// An RFC 3339 date-time string.
    mutating func readTime() -> EventTime? {
        readString().flatMap(EventTime.init(rfc3339:))
    }

    /// Reads an optional member: if the input goes on with `key` (the literal up to the value), its
    /// value, by `read`, then `suffix`. Whether the input went on as expected: `false` for a member
    /// that is there but unreadable.
    mutating func readOptional<Value>(
        _ key: StaticString, into value: inout Value?, _ read: (inout JSONParser) -> Value?,
        then suffix: StaticString = ""
    ) -> Bool {
        guard skip(key) else { return true }
        value = read(&self)
        return value != nil && skip(suffix)
    }
}
