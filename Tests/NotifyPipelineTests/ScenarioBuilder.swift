import Foundation
import NotifyCore

/// Builds scenario events for the tests; `second` is the event time in seconds after a fixed base.
enum Scenario {
    static let base = EventTime(rfc3339: "2026-11-22T09:00:00Z")!

    static func at(_ second: Double) -> String {
        base.adding(milliseconds: Int64(second * 1000)).rfc3339
    }

    static func json(_ object: [String: Any]) -> String {
        String(decoding: try! JSONSerialization.data(withJSONObject: object, options: [.sortedKeys]), as: UTF8.self)
    }

    static func identity(_ userId: String, _ name: String, at second: Double) -> ScenarioEvent {
        ScenarioEvent(
            topic: Topic.identities,
            json: json([
                "type": "identity.updated", "id": "i-\(userId)-\(second)", "at": at(second), "userId": userId,
                "displayName": name,
            ]))
    }

    static func conversation(_ id: String, members: [String], at second: Double = 0) -> ScenarioEvent {
        ScenarioEvent(
            topic: Topic.conversations,
            json: json([
                "type": "conversation.updated", "id": "c-\(id)-\(second)", "at": at(second), "conversationId": id,
                "kind": members.count > 2 ? "group" : "direct", "members": members,
            ]))
    }

    /// One Android device on FCM per user, `<user>-phone`.
    static func phone(_ userId: String, at second: Double = 0) -> ScenarioEvent {
        ScenarioEvent(
            topic: Topic.devices,
            json: json([
                "type": "devices.updated", "id": "d-\(userId)-\(second)", "at": at(second), "userId": userId,
                "devices": [
                    [
                        "deviceId": "\(userId)-phone", "platform": "android", "provider": "fcm",
                        "token": "token-\(userId)", "appId": "com.example.chat",
                    ]
                ],
            ]))
    }

    static func message(_ id: String, in conversation: String, from sender: String, _ text: String, at second: Double)
        -> ScenarioEvent
    {
        ScenarioEvent(
            topic: Topic.messages,
            json: json([
                "type": "message.received", "id": "e-\(id)", "at": at(second), "messageId": id,
                "conversationId": conversation, "senderId": sender, "senderHandle": sender, "kind": "text",
                "text": text,
            ]))
    }

    /// A photo message: a JPEG of `bytes` at `https://cdn.example/<id>.jpg`, with a caption.
    static func photo(_ id: String, in conversation: String, from sender: String, bytes: Int, at second: Double)
        -> ScenarioEvent
    {
        ScenarioEvent(
            topic: Topic.messages,
            json: json([
                "type": "message.received", "id": "e-\(id)", "at": at(second), "messageId": id,
                "conversationId": conversation, "senderId": sender, "kind": "image", "text": "look",
                "attachment": ["url": "https://cdn.example/\(id).jpg", "mimeType": "image/jpeg", "bytes": bytes],
            ]))
    }

    /// Alice and Bob known, their direct conversation `c1`, Bob's phone: the smallest world a message reaches a device in.
    static let aliceAndBob = [
        identity("alice", "Alice", at: 0), identity("bob", "Bob", at: 0),
        conversation("c1", members: ["alice", "bob"]), phone("bob"),
    ]

    static func read(_ userId: String, _ conversation: String, at second: Double) -> ScenarioEvent {
        ScenarioEvent(
            topic: Topic.reads,
            json: json([
                "type": "conversation.read", "id": "r-\(userId)-\(conversation)-\(second)", "at": at(second),
                "userId": userId, "conversationId": conversation,
            ]))
    }
}
