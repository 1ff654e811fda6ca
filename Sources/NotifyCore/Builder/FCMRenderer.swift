/// Renders a notification as the `message` of an FCM HTTP v1 `messages:send`
/// request body: `notification`, string-only `data` (the userInfo keys plus
/// `sender` and `conversation` as JSON strings), an `android` block for
/// Android devices and an `apns` block for iOS devices reached through FCM.
struct FCMRenderer {
    let apns: APNsRenderer

    func alertMessage(_ content: NotificationContent, device: Device, policy: NotificationPolicy,
                      apnsHeaders: [String: String]) -> JSONValue {
        let render: (NotificationContent) -> JSONValue
        let accepted: NotificationContent
        switch device.platform {
        case .android:
            accepted = content.accepting(on: .androidImage, texts: apns.texts)
            render = { androidAlert($0, device: device, policy: policy) }
        case .ios:
            accepted = content.accepting(on: .serviceExtension, texts: apns.texts)
            render = { iosAlert($0, device: device, policy: policy, apnsHeaders: apnsHeaders) }
        }
        return accepted.fitted(render: render).1
    }

    func badgeMessage(_ update: BadgeUpdate, device: Device, policy: NotificationPolicy, apnsHeaders: [String: String]) -> JSONValue {
        var message = JSONObjectBuilder(capacity: 4)
        message["token"] = .string(device.token)
        message["data"] = .object([
            "type": .string("badge"),
            "badge": .string(String(update.badge)),
            "clear-thread-ids": .string(String(decoding: CoreJSON.encode(.array(update.clearThreadIds.map(JSONValue.string))), as: UTF8.self)),
        ])
        switch device.platform {
        case .android:
            message["android"] = androidBlock(policy: policy, notification: nil)
        case .ios:
            message["apns"] = .object(["headers": .object(apnsHeaders.mapValues(JSONValue.string)), "payload": apns.badgePayload(update)])
        }
        return message.value
    }

    private func data(_ content: NotificationContent) -> JSONValue {
        var data: [String: JSONValue] = [:]
        data.reserveCapacity(8)
        for (key, value) in content.userInfo.pairs { data[key] = .string(value) }
        data["sender"] = .string(String(decoding: CoreJSON.encode(content.sender), as: UTF8.self))
        data["conversation"] = .string(String(decoding: CoreJSON.encode(content.conversation), as: UTF8.self))
        data["thread-id"] = .string(content.threadId)
        data["category"] = .string(content.category)
        data["identity-resolved"] = .string(content.identityResolved ? "true" : "false")
        if let badge = content.badge { data["badge"] = .string(String(badge)) }
        return .object(data)
    }

    private func notification(_ content: NotificationContent, image: String?) -> JSONValue {
        var notification = JSONObjectBuilder(capacity: 3)
        notification["title"] = .string(content.title)
        notification["body"] = .string(content.body)
        notification.set("image", image)
        return notification.value
    }

    private func androidBlock(policy: NotificationPolicy, notification: JSONValue?) -> JSONValue {
        var android = JSONObjectBuilder(capacity: 4)
        android["priority"] = .string(policy.androidPriority == .high ? "HIGH" : "NORMAL")
        android["ttl"] = .string("\(policy.ttlSeconds)s")
        android.set("collapse_key", policy.collapseKey)
        android["notification"] = notification
        return android.value
    }

    private func androidAlert(_ content: NotificationContent, device: Device, policy: NotificationPolicy) -> JSONValue {
        var androidNotification = JSONObjectBuilder(capacity: 6)
        androidNotification.set("channel_id", policy.androidChannel)
        androidNotification.set("sound", policy.sound)
        androidNotification["tag"] = .string(content.threadId)
        androidNotification["click_action"] = .string(content.category)
        androidNotification["notification_count"] = content.badge.map { .int(Int64($0)) }
        return .object([
            "token": .string(device.token),
            "notification": notification(content, image: content.attachment?.url),
            "data": data(content),
            "android": androidBlock(policy: policy, notification: androidNotification.value),
        ])
    }

    private func iosAlert(_ content: NotificationContent, device: Device, policy: NotificationPolicy,
                          apnsHeaders: [String: String]) -> JSONValue {
        .object([
            "token": .string(device.token),
            "notification": notification(content, image: nil),
            "data": data(content),
            "apns": .object([
                "headers": .object(apnsHeaders.mapValues(JSONValue.string)),
                "payload": apns.alertPayload(content, policy: policy),
            ]),
        ])
    }
}
