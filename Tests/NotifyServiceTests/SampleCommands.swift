import NotifyCore

/// Commands shaped as the core renders them (DESIGN.md, "The command"), for the console tests.
enum SampleCommands {
    /// A 1×1 PNG as a data URL: an avatar the headless browser can load without a network.
    static let avatarDataURL =
        "data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="

    static func makeContent(
        title: String, subtitle: String? = nil, body: String, sender: (id: String, name: String, image: String?),
        conversation: (id: String, isGroup: Bool, name: String?), attachment: (url: String, mimeType: String)? = nil,
        badge: Int64? = nil, identityResolved: Bool = true
    ) -> JSONValue {
        var senderObject: [String: JSONValue] = ["id": .string(sender.id), "displayName": .string(sender.name)]
        if let image = sender.image { senderObject["imageURL"] = .string(image) }
        var conversationObject: [String: JSONValue] = [
            "id": .string(conversation.id), "isGroup": .bool(conversation.isGroup),
        ]
        if let name = conversation.name { conversationObject["name"] = .string(name) }
        var object: [String: JSONValue] = [
            "title": .string(title), "body": .string(body), "threadId": .string(conversation.id),
            "category": .string("message"),
            "userInfo": .object([
                "talkroom-id": .string(conversation.id), "message-id": .string("m-1"), "sender-id": .string(sender.id),
            ]),
            "sender": .object(senderObject), "conversation": .object(conversationObject),
            "identityResolved": .bool(identityResolved),
        ]
        if let subtitle { object["subtitle"] = .string(subtitle) }
        if let attachment {
            object["attachment"] = .object(["url": .string(attachment.url), "mimeType": .string(attachment.mimeType)])
        }
        if let badge { object["badge"] = .int(badge) }
        return .object(object)
    }

    /// Bob's iPhone hears Alice in the group "Weekend hike", with a photo.
    static let groupImageToIOS: NotificationCommand = {
        let content = makeContent(
            title: "Alice Martin", subtitle: "Weekend hike", body: "Summit at last! 🏔",
            sender: ("u-alice", "Alice Martin", avatarDataURL), conversation: ("c-hike", true, "Weekend hike"),
            attachment: ("https://cdn.example.com/p/summit.jpg", "image/jpeg"), badge: 3)
        return NotificationCommand(
            id: "cmd-ios-1", at: "2026-11-22T03:00:00Z", path: .push,
            recipient: Recipient(userId: "u-bob", deviceId: "d-bob-iphone", platform: .ios, provider: .apns),
            conversationId: "c-hike", messageId: "m-1", expiresAt: "2026-11-23T03:00:00Z", content: content,
            apns: APNsRendering(
                token: "aa11", headers: ["apns-push-type": "alert"],
                payload: .object([
                    "aps": .object([
                        "alert": .object(["title": .string("Alice Martin"), "body": .string("Summit at last! 🏔")]),
                        "badge": .int(3),
                    ])
                ])))
    }()

    /// Carol's Android phone hears Dave directly; his identity arrived late (fallback title).
    static let directToAndroid: NotificationCommand = {
        let content = makeContent(
            title: "@dave", body: "Are we still on for <b>tonight</b>?", sender: ("u-dave", "@dave", nil),
            conversation: ("c-dm", false, nil), identityResolved: false)
        return NotificationCommand(
            id: "cmd-android-1", at: "2026-11-22T03:00:01Z", path: .push,
            recipient: Recipient(userId: "u-carol", deviceId: "d-carol-pixel", platform: .android, provider: .fcm),
            conversationId: "c-dm", messageId: "m-2", expiresAt: "2026-11-23T03:00:01Z", content: content,
            fcm: FCMRendering(
                message: .object(["message": .object(["notification": .object(["title": .string("@dave")])])])))
    }()

    /// A background push clearing Bob's badge after he read the hike group.
    static let badgeClear: NotificationCommand = {
        let content = makeContent(
            title: "", body: "", sender: ("u-bob", "Bob", nil), conversation: ("c-hike", true, "Weekend hike"), badge: 0
        )
        return NotificationCommand(
            id: "cmd-badge-1", at: "2026-11-22T03:00:02Z", path: .push,
            recipient: Recipient(userId: "u-bob", deviceId: "d-bob-iphone", platform: .ios, provider: .apns),
            conversationId: "c-hike", messageId: nil, expiresAt: "2026-11-22T04:00:02Z", content: content,
            apns: APNsRendering(
                token: "aa11", headers: ["apns-push-type": "background", "apns-priority": "5"],
                payload: .object(["aps": .object(["content-available": .int(1), "badge": .int(0)])])))
    }()

    static let actions = ["message": ["Reply", "Mute"]]
}
