/// The value of a record on `notify.commands`: one delivery to one device.
///
/// The shape is the contract in `DESIGN.md` ("The command") and
/// `Schemas/command.schema.json`. Sinks read it; the core writes it.
public struct NotificationCommand: Sendable, Hashable, Codable {
    private var storage: CopyOnWrite<Members>

    private struct Members: Hashable, Sendable, Codable {
        var type: String
        var id: String
        var at: String
        var path: DeliveryPath
        var recipient: Recipient
        var conversationId: String?
        var messageId: String?
        var expiresAt: String
        var contentJSON: EncodedJSON
        var apns: APNsRendering?
        var fcm: FCMRendering?
        var localJSON: EncodedJSON?

        enum CodingKeys: String, CodingKey {
            case type, id, at, path, recipient, conversationId, messageId, expiresAt, apns, fcm
            case contentJSON = "content"
            case localJSON = "local"
        }
    }

    /// Always `"notification.command"`.
    public var type: String {
        get { storage.members.type }
        set { storage.update { $0.type = newValue } }
    }

    /// The command id, derived from (message id or event id, device id, path).
    public var id: String {
        get { storage.members.id }
        set { storage.update { $0.id = newValue } }
    }

    /// Event time of the event that caused the command (RFC 3339).
    public var at: String {
        get { storage.members.at }
        set { storage.update { $0.at = newValue } }
    }

    public var path: DeliveryPath {
        get { storage.members.path }
        set { storage.update { $0.path = newValue } }
    }

    public var recipient: Recipient {
        get { storage.members.recipient }
        set { storage.update { $0.recipient = newValue } }
    }

    public var conversationId: String? {
        get { storage.members.conversationId }
        set { storage.update { $0.conversationId = newValue } }
    }

    public var messageId: String? {
        get { storage.members.messageId }
        set { storage.update { $0.messageId = newValue } }
    }

    /// After this instant (RFC 3339) the command must not be delivered.
    public var expiresAt: String {
        get { storage.members.expiresAt }
        set { storage.update { $0.expiresAt = newValue } }
    }

    /// What the notification says (`NotificationContent`'s JSON form), as built.
    public var contentJSON: EncodedJSON {
        get { storage.members.contentJSON }
        set { storage.update { $0.contentJSON = newValue } }
    }

    /// Present when `recipient.provider == .apns` and `path == .push`.
    public var apns: APNsRendering? {
        get { storage.members.apns }
        set { storage.update { $0.apns = newValue } }
    }

    /// Present when `recipient.provider == .fcm` and `path == .push`: the FCM HTTP v1 body.
    public var fcm: FCMRendering? {
        get { storage.members.fcm }
        set { storage.update { $0.fcm = newValue } }
    }

    /// Present when `path == .local`, as built.
    public var localJSON: EncodedJSON? {
        get { storage.members.localJSON }
        set { storage.update { $0.localJSON = newValue } }
    }

    /// What the notification says (`NotificationContent`'s JSON form).
    public var content: JSONValue {
        get { contentJSON.value }
        set { contentJSON = EncodedJSON(newValue) }
    }

    /// The local rendering, `{"content": ...}`: present when `path == .local`.
    public var local: JSONValue? {
        get { localJSON?.value }
        set { localJSON = newValue.map(EncodedJSON.init) }
    }

    public init(
        id: String, at: String, path: DeliveryPath, recipient: Recipient,
        conversationId: String?, messageId: String?, expiresAt: String, content: JSONValue,
        apns: APNsRendering? = nil, fcm: FCMRendering? = nil, local: JSONValue? = nil
    ) {
        self.init(
            id: id, at: at, path: path, recipient: recipient, conversationId: conversationId, messageId: messageId,
            expiresAt: expiresAt, content: EncodedJSON(content), apns: apns, fcm: fcm,
            local: local.map(EncodedJSON.init))
    }

    /// A command whose content and local rendering are already encoded.
    public init(
        id: String, at: String, path: DeliveryPath, recipient: Recipient,
        conversationId: String?, messageId: String?, expiresAt: String, content: EncodedJSON,
        apns: APNsRendering? = nil, fcm: FCMRendering? = nil, local: EncodedJSON? = nil
    ) {
        storage = CopyOnWrite(
            Members(
                type: "notification.command", id: id, at: at, path: path, recipient: recipient,
                conversationId: conversationId,
                messageId: messageId, expiresAt: expiresAt, contentJSON: content, apns: apns, fcm: fcm, localJSON: local
            ))
    }

    public init(from decoder: any Decoder) throws {
        storage = CopyOnWrite(try Members(from: decoder))
    }

    public func encode(to encoder: any Encoder) throws {
        try storage.members.encode(to: encoder)
    }
}

/// Which way a notification reaches a device.
public enum DeliveryPath: String, Sendable, Hashable, Codable {
    /// Through the platform's push service (APNs or FCM).
    case push
    /// Through the app's own socket while it is in the foreground.
    case local
}

/// The platform of a device.
public enum Platform: String, Sendable, Hashable, Codable, CaseIterable {
    case ios
    case android
}

/// The push provider that reaches a device.
public enum PushProvider: String, Sendable, Hashable, Codable, CaseIterable {
    case apns
    case fcm
}

/// One device of one user.
public struct Recipient: Sendable, Hashable, Codable {
    public var userId: String
    public var deviceId: String
    public var platform: Platform
    public var provider: PushProvider

    public init(userId: String, deviceId: String, platform: Platform, provider: PushProvider) {
        self.userId = userId
        self.deviceId = deviceId
        self.platform = platform
        self.provider = provider
    }
}

/// The APNs rendering of a command: the device token, the HTTP/2 request
/// headers (`apns-push-type`, `apns-priority`, `apns-expiration`, `apns-topic`,
/// `apns-id`, `apns-collapse-id`) and the JSON payload.
public struct APNsRendering: Sendable, Hashable, Codable {
    public var token: String
    /// The headers as a JSON object of strings, as built.
    public var headersJSON: EncodedJSON
    /// The payload, as built.
    public var payloadJSON: EncodedJSON

    /// The HTTP/2 request headers.
    public var headers: [String: String] {
        get {
            guard case .object(let members) = headersJSON.value else { return [:] }
            return members.compactMapValues(\.stringValue)
        }
        set { headersJSON = EncodedJSON(.object(newValue.mapValues(JSONValue.string))) }
    }

    /// The JSON payload.
    public var payload: JSONValue {
        get { payloadJSON.value }
        set { payloadJSON = EncodedJSON(newValue) }
    }

    public init(token: String, headers: [String: String], payload: JSONValue) {
        self.init(
            token: token, headers: EncodedJSON(.object(headers.mapValues(JSONValue.string))),
            payload: EncodedJSON(payload))
    }

    /// A rendering whose headers (a JSON object of strings) and payload are already encoded.
    public init(token: String, headers: EncodedJSON, payload: EncodedJSON) {
        self.token = token
        self.headersJSON = headers
        self.payloadJSON = payload
    }

    enum CodingKeys: String, CodingKey {
        case token, headers, payload
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        self.init(
            token: try container.decode(String.self, forKey: .token),
            headers: try container.decode([String: String].self, forKey: .headers),
            payload: try container.decode(JSONValue.self, forKey: .payload))
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(token, forKey: .token)
        try container.encode(headersJSON, forKey: .headers)
        try container.encode(payloadJSON, forKey: .payload)
    }
}

/// The FCM rendering of a command: `{"message": {...}}`, the body of
/// `POST /v1/projects/{id}/messages:send`.
public struct FCMRendering: Sendable, Hashable, Codable {
    /// The message, as built.
    public var messageJSON: EncodedJSON

    /// The `message` object.
    public var message: JSONValue {
        get { messageJSON.value }
        set { messageJSON = EncodedJSON(newValue) }
    }

    public init(message: JSONValue) {
        self.init(message: EncodedJSON(message))
    }

    /// A rendering whose message is already encoded.
    public init(message: EncodedJSON) {
        messageJSON = message
    }

    enum CodingKeys: String, CodingKey {
        case messageJSON = "message"
    }
}
