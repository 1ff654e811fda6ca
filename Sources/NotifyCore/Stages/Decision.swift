/// Why a delivery was not made.
public enum SuppressionReason: String, Sendable, Hashable, Codable, CaseIterable {
    /// Rule 2: the recipient sent the message.
    case ownMessage = "own-message"
    /// Rule 3: the recipient muted the conversation.
    case muted
    /// Rule 4: the device shows that conversation.
    case foregroundInConversation = "foreground-in-conversation"
    /// Rule 5: the device shows the tab bar / talk list.
    case foregroundTabBar = "foreground-tab-bar"
    /// The recipient has no devices.
    case noDevices = "no-devices"
    /// Rule 16: the device's token was reported invalid.
    case tokenInvalid = "token-invalid"
    /// Rule 12: a background push to the device was sent too recently; this one is coalesced into a later one.
    case backgroundPushCoalesced = "background-push-coalesced"
    /// The fanout record is a copy of one already routed (stage 1 wrote it again after a crash), or
    /// older than a message of its conversation routed already: it is neither counted nor delivered.
    case alreadyApplied = "already-applied"
    /// Rule 12: the recipient read the conversation after the message was sent (it arrived late,
    /// held for its sender's identity); it raises no badge.
    case alreadyRead = "already-read"
}

/// One delivery that was not made, and why: printed by `notify render`,
/// logged by the pipeline.
public struct Decision: Sendable, Hashable, Codable, JSONRepresentable, CustomStringConvertible {
    /// Event time of the event that led to the decision.
    public var at: EventTime
    /// The id of that event.
    public var eventId: String
    public var reason: SuppressionReason
    public var userId: String
    public var deviceId: String?
    public var conversationId: String?
    public var messageId: String?

    public init(
        at: EventTime, eventId: String, reason: SuppressionReason, userId: String,
        deviceId: String? = nil, conversationId: String? = nil, messageId: String? = nil
    ) {
        self.at = at
        self.eventId = eventId
        self.reason = reason
        self.userId = userId
        self.deviceId = deviceId
        self.conversationId = conversationId
        self.messageId = messageId
    }

    public var jsonValue: JSONValue {
        var object = JSONObjectBuilder(capacity: 8)
        object["type"] = .string("notification.suppressed")
        object["at"] = .string(at.rfc3339)
        object["eventId"] = .string(eventId)
        object["reason"] = .string(reason.rawValue)
        object["userId"] = .string(userId)
        object.set("deviceId", deviceId)
        object.set("conversationId", conversationId)
        object.set("messageId", messageId)
        return object.value
    }

    public var description: String {
        var text = "suppressed \(reason.rawValue): user \(userId)"
        if let deviceId { text += " device \(deviceId)" }
        if let conversationId { text += " conversation \(conversationId)" }
        if let messageId { text += " message \(messageId)" }
        return text + " (event \(eventId) at \(at.rfc3339))"
    }
}
