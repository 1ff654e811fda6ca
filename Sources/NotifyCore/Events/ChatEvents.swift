/// One event the chat backend publishes. Each type has one topic, one `type`
/// string, and one JSON form (``JSONRepresentable/jsonValue``) that is also
/// its `Codable` form; `Schemas/<topic>.schema.json` describes it.
public protocol ChatEvent: JSONRepresentable, Sendable, Hashable, Codable {
    /// The value of the `type` field.
    static var eventType: String { get }
    /// The topic the event is published on.
    static var topic: String { get }
    /// The unique event id.
    var id: String { get }
    /// Event time.
    var at: EventTime { get }
    /// The record key on its topic (conversation id or user id).
    var key: String { get }
    /// Reads the event from the members of its JSON object (strict).
    init(reading fields: FieldReader) throws(FieldError)
}

extension ChatEvent {
    /// Decodes the event from a JSON value, strictly.
    public init(json: JSONValue) throws(FieldError) {
        let fields = try FieldReader(json)
        try fields.constant("type", Self.eventType)
        try self.init(reading: fields)
    }

    public init(from decoder: any Decoder) throws {
        let json = try JSONValue(from: decoder)
        do {
            try self.init(json: json)
        } catch {
            throw DecodingError.dataCorrupted(.init(codingPath: decoder.codingPath, debugDescription: "\(Self.topic): field \"\(error.field)\": \(error.problem)"))
        }
    }

    public func encode(to encoder: any Encoder) throws {
        try jsonValue.encode(to: encoder)
    }

    /// The members every event has: `type`, `id`, `at`.
    func envelope(capacity: Int) -> JSONObjectBuilder {
        var object = JSONObjectBuilder(capacity: capacity)
        object["type"] = .string(Self.eventType)
        object["id"] = .string(id)
        object["at"] = .string(at.rfc3339)
        return object
    }
}

/// The topics of the design brief, by name.
public enum Topic {
    public static let messages = "chat.messages"
    public static let identities = "chat.identities"
    public static let conversations = "chat.conversations"
    public static let devices = "chat.devices"
    public static let preferences = "chat.preferences"
    public static let clientState = "chat.client-state"
    public static let reads = "chat.reads"
    public static let fanout = "notify.fanout"
    public static let commands = "notify.commands"
    public static let outcomes = "notify.outcomes"
    public static let dlq = "notify.dlq"
    public static let fanoutChangelog = "notify.fanout-changelog"
    public static let routeChangelog = "notify.route-changelog"
    /// Stage 1's inputs that a producer partitioned otherwise than murmur2, forwarded to the owning task.
    public static let fanoutRepartition = "notify.fanout-repartition"
    /// Stage 2's inputs that a producer partitioned otherwise than murmur2, forwarded to the owning task.
    public static let routeRepartition = "notify.route-repartition"
}

// MARK: - chat.messages

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
        mimeType = try fields.string("mimeType", maxLength: 255)
        let slash = mimeType.firstIndex(of: "/")
        guard let slash, slash != mimeType.startIndex, mimeType.index(after: slash) != mimeType.endIndex,
              !mimeType.contains(where: { $0.isWhitespace }) else {
            throw fields.error("mimeType", "\"\(mimeType)\" is not a MIME type such as image/jpeg")
        }
        bytes = try fields.integer("bytes", minimum: 0)
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
        try fields.rejectUnknown(allowed: ["type", "id", "at", "messageId", "conversationId", "senderId", "senderHandle",
                                           "kind", "text", "attachment", "mentions"])
        id = try fields.string("id")
        at = try fields.time("at")
        messageId = try fields.string("messageId")
        conversationId = try fields.string("conversationId")
        senderId = try fields.string("senderId")
        senderHandle = try fields.optionalString("senderHandle", maxLength: 256)
        kind = try fields.choice("kind")
        text = try fields.optionalText("text")
        attachment = try fields.optionalObject("attachment").map { (reader) throws(FieldError) in try Attachment(reading: reader) }
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

// MARK: - chat.identities

/// `identity.updated` on `chat.identities` (key: user id).
public struct IdentityUpdated: ChatEvent {
    public static let eventType = "identity.updated"
    public static let topic = Topic.identities
    public var id: String
    public var at: EventTime
    public var userId: String
    public var displayName: String
    public var handle: String?
    public var imageURL: String?
    public var key: String { userId }

    public init(id: String, at: EventTime, userId: String, displayName: String, handle: String? = nil, imageURL: String? = nil) {
        self.id = id
        self.at = at
        self.userId = userId
        self.displayName = displayName
        self.handle = handle
        self.imageURL = imageURL
    }

    public init(reading fields: FieldReader) throws(FieldError) {
        try fields.rejectUnknown(allowed: ["type", "id", "at", "userId", "displayName", "handle", "imageURL"])
        id = try fields.string("id")
        at = try fields.time("at")
        userId = try fields.string("userId")
        displayName = try fields.string("displayName", maxLength: 256)
        handle = try fields.optionalString("handle", maxLength: 256)
        imageURL = try fields.optionalURL("imageURL")
    }

    public var jsonValue: JSONValue {
        var object = envelope(capacity: 7)
        object["userId"] = .string(userId)
        object["displayName"] = .string(displayName)
        object.set("handle", handle)
        object.set("imageURL", imageURL)
        return object.value
    }
}

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

// MARK: - chat.conversations

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

    public init(id: String, at: EventTime, conversationId: String, kind: Kind, name: String? = nil, imageURL: String? = nil, members: [String]) {
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

// MARK: - chat.devices

/// One device of a user, as listed in `devices.updated`.
public struct Device: Sendable, Hashable, Codable {
    public var deviceId: String
    public var platform: Platform
    public var provider: PushProvider
    public var token: String
    /// The app's bundle id (the APNs topic) or Android package.
    public var appId: String
    public var locale: String?

    public init(deviceId: String, platform: Platform, provider: PushProvider, token: String, appId: String, locale: String? = nil) {
        self.deviceId = deviceId
        self.platform = platform
        self.provider = provider
        self.token = token
        self.appId = appId
        self.locale = locale
    }

    init(reading fields: FieldReader) throws(FieldError) {
        try fields.rejectUnknown(allowed: ["deviceId", "platform", "provider", "token", "appId", "locale"])
        deviceId = try fields.string("deviceId")
        platform = try fields.choice("platform")
        provider = try fields.choice("provider")
        token = try fields.string("token", maxLength: 4096)
        appId = try fields.string("appId", maxLength: 255)
        locale = try fields.optionalString("locale", maxLength: 35)
        if platform == .android, provider == .apns {
            throw fields.error("provider", "an android device cannot be reached through apns")
        }
    }

    var jsonValue: JSONValue {
        var object = JSONObjectBuilder(capacity: 6)
        object["deviceId"] = .string(deviceId)
        object["platform"] = .string(platform.rawValue)
        object["provider"] = .string(provider.rawValue)
        object["token"] = .string(token)
        object["appId"] = .string(appId)
        object.set("locale", locale)
        return object.value
    }
}


/// `devices.updated` on `chat.devices` (key: user id): the user's whole device list.
public struct DevicesUpdated: ChatEvent {
    public static let eventType = "devices.updated"
    public static let topic = Topic.devices
    public var id: String
    public var at: EventTime
    public var userId: String
    public var devices: [Device]
    public var key: String { userId }

    public init(id: String, at: EventTime, userId: String, devices: [Device]) {
        self.id = id
        self.at = at
        self.userId = userId
        self.devices = devices
    }

    public init(reading fields: FieldReader) throws(FieldError) {
        try fields.rejectUnknown(allowed: ["type", "id", "at", "userId", "devices"])
        id = try fields.string("id")
        at = try fields.time("at")
        userId = try fields.string("userId")
        var devices: [Device] = []
        var seen = Set<String>()
        for element in try fields.array("devices") {
            let device = try Device(reading: FieldReader(element.value, path: element.path))
            guard seen.insert(device.deviceId).inserted else {
                throw FieldError(field: element.path + ".deviceId", problem: "duplicate device \"\(device.deviceId)\"")
            }
            devices.append(device)
        }
        self.devices = devices
    }

    public var jsonValue: JSONValue {
        var object = envelope(capacity: 5)
        object["userId"] = .string(userId)
        object["devices"] = .array(devices.map(\.jsonValue))
        return object.value
    }
}

// MARK: - chat.preferences

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

    public init(id: String, at: EventTime, userId: String, previews: PreviewSetting, muted: [String: EventTime?] = [:]) {
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

// MARK: - chat.client-state

/// `client.state` on `chat.client-state` (key: user id): what one device shows.
public struct ClientStateChanged: ChatEvent {
    public static let eventType = "client.state"
    public static let topic = Topic.clientState

    /// Whether the app is on screen.
    public enum AppState: String, Sendable, Hashable, Codable, CaseIterable {
        case foreground, background
    }

    /// The kind of screen the app shows.
    public enum ScreenKind: String, Sendable, Hashable, Codable, CaseIterable {
        case talkroom, tabbar, profile, settings, other
    }

    /// The screen the app shows; `conversationId` for a talk room.
    public struct Screen: Sendable, Hashable, Codable {
        public var kind: ScreenKind
        public var conversationId: String?

        public init(kind: ScreenKind, conversationId: String? = nil) {
            self.kind = kind
            self.conversationId = conversationId
        }
    }

    public var id: String
    public var at: EventTime
    public var userId: String
    public var deviceId: String
    public var state: AppState
    public var screen: Screen?
    public var key: String { userId }

    public init(id: String, at: EventTime, userId: String, deviceId: String, state: AppState, screen: Screen? = nil) {
        self.id = id
        self.at = at
        self.userId = userId
        self.deviceId = deviceId
        self.state = state
        self.screen = screen
    }

    public init(reading fields: FieldReader) throws(FieldError) {
        try fields.rejectUnknown(allowed: ["type", "id", "at", "userId", "deviceId", "state", "screen"])
        id = try fields.string("id")
        at = try fields.time("at")
        userId = try fields.string("userId")
        deviceId = try fields.string("deviceId")
        state = try fields.choice("state")
        if let screenFields = try fields.optionalObject("screen") {
            try screenFields.rejectUnknown(allowed: ["kind", "conversationId"])
            let kind: ScreenKind = try screenFields.choice("kind")
            let conversationId = try screenFields.optionalString("conversationId")
            if kind == .talkroom, conversationId == nil {
                throw screenFields.error("conversationId", "required for a screen of kind \"talkroom\"")
            }
            screen = Screen(kind: kind, conversationId: conversationId)
        } else {
            screen = nil
        }
    }

    public var jsonValue: JSONValue {
        var object = envelope(capacity: 7)
        object["userId"] = .string(userId)
        object["deviceId"] = .string(deviceId)
        object["state"] = .string(state.rawValue)
        if let screen {
            var screenObject = JSONObjectBuilder(capacity: 2)
            screenObject["kind"] = .string(screen.kind.rawValue)
            screenObject.set("conversationId", screen.conversationId)
            object["screen"] = screenObject.value
        }
        return object.value
    }
}

// MARK: - chat.reads

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
