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
