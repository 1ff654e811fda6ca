/// A record value that could not be decoded: the topic, the field and what
/// was wrong. `description` is what the pipeline puts in the DLQ reason header.
public struct EventDecodingError: Error, Sendable, Hashable, CustomStringConvertible {
    public var topic: String
    /// The dotted path of the offending field, or `(value)` when the whole value is wrong.
    public var field: String
    public var problem: String

    public init(topic: String, field: String, problem: String) {
        self.topic = topic
        self.field = field
        self.problem = problem
    }

    public var description: String {
        "\(topic): field \"\(field)\": \(problem)"
    }
}

/// Every value the core consumes, decoded from one record of one topic.
public enum InputEvent: Sendable, Hashable {
    case message(MessageReceived)
    case conversation(ConversationUpdated)
    case identityUpdated(IdentityUpdated)
    case identityDeleted(IdentityDeleted)
    case devices(DevicesUpdated)
    case preferences(PreferencesUpdated)
    case clientState(ClientStateChanged)
    case read(ConversationRead)
    case fanout(FanoutRecord)
    case outcome(NotificationOutcome)

    /// The topics whose values ``decode(topic:value:)`` reads.
    public static let topics = [
        Topic.messages, Topic.conversations, Topic.identities, Topic.devices, Topic.preferences,
        Topic.clientState, Topic.reads, Topic.fanout, Topic.outcomes,
    ]

    /// Decodes and validates the value of a record of `topic`, strictly: a
    /// missing or mistyped field, an unknown field or an unknown `type` is an
    /// error naming the topic and the field.
    public static func decode(topic: String, value: some Collection<UInt8>) throws(EventDecodingError) -> InputEvent {
        if topic == Topic.fanout,
            let record = value.withContiguousStorageIfAvailable(FanoutRecord.init(canonical:)) ?? nil
        {
            return .fanout(record)
        }
        let document: ParsedDocument
        do {
            document = try CoreJSON.parseMembers(value)
        } catch {
            throw EventDecodingError(topic: topic, field: "(value)", problem: error.description)
        }
        return try decode(topic: topic) { () throws(FieldError) in try FieldReader(document) }
    }

    /// Decodes an already parsed value of a record of `topic`.
    public static func decode(topic: String, json: JSONValue) throws(EventDecodingError) -> InputEvent {
        try decode(topic: topic) { () throws(FieldError) in try FieldReader(json) }
    }

    private static func decode(topic: String, reading: () throws(FieldError) -> FieldReader) throws(EventDecodingError)
        -> InputEvent
    {
        do throws(FieldError) {
            let fields = try reading()
            let type = try fields.string("type")
            switch (topic, type) {
            case (Topic.messages, MessageReceived.eventType): return .message(try MessageReceived(reading: fields))
            case (Topic.conversations, ConversationUpdated.eventType):
                return .conversation(try ConversationUpdated(reading: fields))
            case (Topic.identities, IdentityUpdated.eventType):
                return .identityUpdated(try IdentityUpdated(reading: fields))
            case (Topic.identities, IdentityDeleted.eventType):
                return .identityDeleted(try IdentityDeleted(reading: fields))
            case (Topic.devices, DevicesUpdated.eventType): return .devices(try DevicesUpdated(reading: fields))
            case (Topic.preferences, PreferencesUpdated.eventType):
                return .preferences(try PreferencesUpdated(reading: fields))
            case (Topic.clientState, ClientStateChanged.eventType):
                return .clientState(try ClientStateChanged(reading: fields))
            case (Topic.reads, ConversationRead.eventType): return .read(try ConversationRead(reading: fields))
            case (Topic.fanout, FanoutRecord.eventType): return .fanout(try FanoutRecord(reading: fields))
            case (Topic.outcomes, NotificationOutcome.eventType):
                return .outcome(try NotificationOutcome(reading: fields))
            default:
                let expected = expectedTypes(topic: topic)
                guard !expected.isEmpty else {
                    throw FieldError(
                        field: "(topic)",
                        problem: "not a topic the core reads (one of \(topics.joined(separator: ", ")))")
                }
                throw FieldError(
                    field: "type",
                    problem:
                        "\"\(type)\" is not an event of this topic (expected \(expected.map { "\"\($0)\"" }.joined(separator: " or ")))"
                )
            }
        } catch {
            throw EventDecodingError(topic: topic, field: error.field, problem: error.problem)
        }
    }

    /// The `type` values a topic carries.
    public static func expectedTypes(topic: String) -> [String] {
        switch topic {
        case Topic.messages: [MessageReceived.eventType]
        case Topic.conversations: [ConversationUpdated.eventType]
        case Topic.identities: [IdentityUpdated.eventType, IdentityDeleted.eventType]
        case Topic.devices: [DevicesUpdated.eventType]
        case Topic.preferences: [PreferencesUpdated.eventType]
        case Topic.clientState: [ClientStateChanged.eventType]
        case Topic.reads: [ConversationRead.eventType]
        case Topic.fanout: [FanoutRecord.eventType]
        case Topic.outcomes: [NotificationOutcome.eventType]
        default: []
        }
    }

    /// The topic the event is read from.
    public var topic: String {
        switch self {
        case .message: Topic.messages
        case .conversation: Topic.conversations
        case .identityUpdated, .identityDeleted: Topic.identities
        case .devices: Topic.devices
        case .preferences: Topic.preferences
        case .clientState: Topic.clientState
        case .read: Topic.reads
        case .fanout: Topic.fanout
        case .outcome: Topic.outcomes
        }
    }

    /// The event id.
    public var id: String {
        switch self {
        case .message(let event): event.id
        case .conversation(let event): event.id
        case .identityUpdated(let event): event.id
        case .identityDeleted(let event): event.id
        case .devices(let event): event.id
        case .preferences(let event): event.id
        case .clientState(let event): event.id
        case .read(let event): event.id
        case .fanout(let record): record.id
        case .outcome(let outcome): outcome.id
        }
    }

    /// Event time.
    public var at: EventTime {
        switch self {
        case .message(let event): event.at
        case .conversation(let event): event.at
        case .identityUpdated(let event): event.at
        case .identityDeleted(let event): event.at
        case .devices(let event): event.at
        case .preferences(let event): event.at
        case .clientState(let event): event.at
        case .read(let event): event.at
        case .fanout(let record): record.at
        case .outcome(let outcome): EventTime(rfc3339: outcome.at) ?? EventTime(milliseconds: 0)
        }
    }

    /// The value as JSON, as ``CoreJSON/encode(_:)`` writes it.
    public var jsonValue: JSONValue {
        switch self {
        case .message(let event): event.jsonValue
        case .conversation(let event): event.jsonValue
        case .identityUpdated(let event): event.jsonValue
        case .identityDeleted(let event): event.jsonValue
        case .devices(let event): event.jsonValue
        case .preferences(let event): event.jsonValue
        case .clientState(let event): event.jsonValue
        case .read(let event): event.jsonValue
        case .fanout(let record): record.jsonValue
        case .outcome(let outcome): outcome.jsonValue
        }
    }

    /// The record key `Schemas/topics.json` prescribes for the event's topic.
    public var key: String {
        switch self {
        case .message(let event): event.key
        case .conversation(let event): event.key
        case .identityUpdated(let event): event.key
        case .identityDeleted(let event): event.key
        case .devices(let event): event.key
        case .preferences(let event): event.key
        case .clientState(let event): event.key
        case .read(let event): event.key
        case .fanout(let record): record.key
        case .outcome(let outcome): outcome.recipient.userId
        }
    }

    /// The input of stage 1 this event is, if it is one.
    public var fanoutInput: FanoutInput? {
        switch self {
        case .message(let event): .message(event)
        case .conversation(let event): .conversation(event)
        case .identityUpdated(let event): .identityUpdated(event)
        case .identityDeleted(let event): .identityDeleted(event)
        default: nil
        }
    }

    /// The input of stage 2 this event is, if it is one.
    public var routeInput: RouteInput? {
        switch self {
        case .fanout(let record): .fanout(record)
        case .devices(let event): .devices(event)
        case .preferences(let event): .preferences(event)
        case .clientState(let event): .clientState(event)
        case .read(let event): .read(event)
        case .outcome(let outcome): .outcome(outcome)
        default: nil
        }
    }
}

extension NotificationOutcome {
    static let eventType = "notification.outcome"

    init(reading fields: FieldReader) throws(FieldError) {
        try fields.rejectUnknown(allowed: [
            "type", "id", "at", "commandId", "sink", "recipient", "conversationId",
            "messageId", "outcome", "reason", "token",
        ])
        _ = try fields.time("at")
        let recipientFields = try fields.object("recipient")
        try recipientFields.rejectUnknown(allowed: ["userId", "deviceId", "platform", "provider"])
        let recipient = Recipient(
            userId: try recipientFields.string("userId"), deviceId: try recipientFields.string("deviceId"),
            platform: try recipientFields.choice("platform"), provider: try recipientFields.choice("provider"))
        self.init(
            id: try fields.string("id"), at: try fields.string("at"), commandId: try fields.string("commandId"),
            sink: try fields.string("sink"), recipient: recipient,
            conversationId: try fields.optionalString("conversationId"),
            messageId: try fields.optionalString("messageId"),
            outcome: try fields.choice("outcome"), reason: try fields.optionalString("reason"),
            token: try fields.optionalString("token"))
    }
}
