@testable import NotifyCore

/// Builds events for the stage tests: times are seconds after a fixed instant.
struct EventFactory {
    static let origin = EventTime(rfc3339: "2026-11-22T10:00:00Z")!
    private(set) var counter = 0

    static func time(_ seconds: Double) -> EventTime {
        origin.adding(milliseconds: Int64((seconds * 1000).rounded()))
    }

    private mutating func nextId() -> String {
        counter += 1
        return "ev\(counter)"
    }

    mutating func identity(_ userId: String, _ name: String, at seconds: Double = 0) -> IdentityUpdated {
        IdentityUpdated(id: nextId(), at: Self.time(seconds), userId: userId, displayName: name, handle: userId)
    }

    mutating func conversation(_ id: String, _ members: [String], group: Bool = false, at seconds: Double = 0)
        -> ConversationUpdated
    {
        ConversationUpdated(
            id: nextId(), at: Self.time(seconds), conversationId: id, kind: group ? .group : .direct,
            name: group ? "Group \(id)" : nil, members: members)
    }

    mutating func message(
        _ messageId: String, in conversationId: String, from senderId: String, at seconds: Double,
        text: String = "hello", handle: String? = nil, mentions: [String] = []
    ) -> MessageReceived {
        MessageReceived(
            id: nextId(), at: Self.time(seconds), messageId: messageId, conversationId: conversationId,
            senderId: senderId, senderHandle: handle, kind: .text, text: text, mentions: mentions)
    }

    mutating func devices(_ userId: String, _ devices: [Device], at seconds: Double = 0) -> DevicesUpdated {
        DevicesUpdated(id: nextId(), at: Self.time(seconds), userId: userId, devices: devices)
    }

    mutating func client(
        _ userId: String, _ deviceId: String, _ state: ClientStateChanged.AppState,
        _ screen: ClientStateChanged.Screen? = nil, at seconds: Double = 0
    ) -> ClientStateChanged {
        ClientStateChanged(
            id: nextId(), at: Self.time(seconds), userId: userId, deviceId: deviceId, state: state, screen: screen)
    }

    mutating func read(_ userId: String, _ conversationId: String, at seconds: Double) -> ConversationRead {
        ConversationRead(id: nextId(), at: Self.time(seconds), userId: userId, conversationId: conversationId)
    }

    static func iPhone(_ id: String, provider: PushProvider = .apns) -> Device {
        Device(deviceId: id, platform: .ios, provider: provider, token: "token-\(id)", appId: "com.example.chat")
    }

    static func pixel(_ id: String) -> Device {
        Device(deviceId: id, platform: .android, provider: .fcm, token: "token-\(id)", appId: "com.example.chat")
    }

    /// A fanout record of a message from "alice" in `conversationId` for `recipient`.
    static func record(
        _ messageId: String, in conversationId: String, for recipient: String, at seconds: Double,
        configuration: CoreConfiguration
    ) -> FanoutRecord {
        let conversation = ConversationUpdated(
            id: "c", at: time(0), conversationId: conversationId, kind: .direct, members: ["alice", recipient])
        let message = MessageReceived(
            id: "m-\(messageId)", at: time(seconds), messageId: messageId, conversationId: conversationId,
            senderId: "alice", kind: .text, text: "hi")
        let sender = IdentityUpdated(id: "i", at: time(0), userId: "alice", displayName: "Alice")
        let content = ContentBuilder(texts: configuration.texts).content(
            of: message, in: conversation, sender: sender.senderIdentity)
        return FanoutRecord(
            at: time(seconds), recipientId: recipient, conversationId: conversationId, messageId: messageId,
            notificationType: "message", content: content)
    }
}
