/// The value of a record on `notify.commands`: one delivery to one device.
///
/// The shape is the contract in `DESIGN.md` ("The command") and
/// `Schemas/command.schema.json`. Sinks read it; the core writes it.
public struct NotificationCommand: Sendable, Hashable, Codable {
    /// Always `"notification.command"`.
    public var type: String
    /// The command id, derived from (message id or event id, device id, path).
    public var id: String
    /// Event time of the event that caused the command (RFC 3339).
    public var at: String
    public var path: DeliveryPath
    public var recipient: Recipient
    public var conversationId: String?
    public var messageId: String?
    /// After this instant (RFC 3339) the command must not be delivered.
    public var expiresAt: String
    public var content: JSONValue
    /// Present when `recipient.provider == .apns` and `path == .push`.
    public var apns: APNsRendering?
    /// Present when `recipient.provider == .fcm` and `path == .push`: the FCM HTTP v1 body.
    public var fcm: FCMRendering?
    /// Present when `path == .local`.
    public var local: JSONValue?

    public init(
        id: String, at: String, path: DeliveryPath, recipient: Recipient,
        conversationId: String?, messageId: String?, expiresAt: String, content: JSONValue,
        apns: APNsRendering? = nil, fcm: FCMRendering? = nil, local: JSONValue? = nil
    ) {
        self.type = "notification.command"
        self.id = id
        self.at = at
        self.path = path
        self.recipient = recipient
        self.conversationId = conversationId
        self.messageId = messageId
        self.expiresAt = expiresAt
        self.content = content
        self.apns = apns
        self.fcm = fcm
        self.local = local
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
    public var headers: [String: String]
    public var payload: JSONValue

    public init(token: String, headers: [String: String], payload: JSONValue) {
        self.token = token
        self.headers = headers
        self.payload = payload
    }
}

/// The FCM rendering of a command: `{"message": {...}}`, the body of
/// `POST /v1/projects/{id}/messages:send`.
public struct FCMRendering: Sendable, Hashable, Codable {
    public var message: JSONValue

    public init(message: JSONValue) {
        self.message = message
    }
}
