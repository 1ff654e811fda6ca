/// Renders a notification as the `message` of an FCM HTTP v1 `messages:send`
/// request body: `notification`, string-only `data` (the userInfo keys plus
/// `sender` and `conversation` as JSON strings), an `android` block for
/// Android devices and an `apns` block for iOS devices reached through FCM.
struct FCMRenderer {
    let apns: APNsRenderer

    func alertMessage(_ content: NotificationContent, identity: IdentityJSON, device: Device, policy: NotificationPolicy,
                      apnsHeaders: [String: String]) -> JSONValue {
        let render: (NotificationContent) -> JSONValue
        let accepted: NotificationContent
        switch device.platform {
        case .android:
            accepted = content.accepting(on: .androidImage, texts: apns.texts)
            render = { androidAlert($0, identity: identity, device: device, policy: policy) }
        case .ios:
            accepted = content.accepting(on: .serviceExtension, texts: apns.texts)
            render = { iosAlert($0, identity: identity, device: device, policy: policy, apnsHeaders: apnsHeaders) }
        }
        return accepted.fitted(render: render).1
    }

    func badgeMessage(_ update: BadgeUpdate, device: Device, policy: NotificationPolicy, apnsHeaders: [String: String]) -> JSONValue {
        var message = JSONObjectBuilder(capacity: 4)
        message["token"] = .string(device.token)
        message["data"] = .object([
            "type": .string("badge"),
            "badge": .string(String(update.badge)),
            "clear-thread-ids": .string(CoreJSON.text(.array(update.clearThreadIds.map(JSONValue.string)))),
        ])
        switch device.platform {
        case .android:
            message["android"] = androidBlock(policy: policy, notification: nil)
        case .ios:
            message["apns"] = .object(["headers": .object(apnsHeaders.mapValues(JSONValue.string)), "payload": apns.badgePayload(update)])
        }
        return message.value
    }

    private func data(_ content: NotificationContent, identity: IdentityJSON) -> JSONValue {
        var data = [String: JSONValue](minimumCapacity: 8)
        for (key, value) in content.userInfo.pairs { data[key] = .string(value) }
        data["sender"] = .string(identity.senderText)
        data["conversation"] = .string(identity.conversationText)
        data["thread-id"] = .string(content.threadId)
        data["category"] = .string(content.category)
        data["identity-resolved"] = .string(content.identityResolved ? "true" : "false")
        if let badge = content.badge { data["badge"] = .string(String(badge)) }
        return .object(data)
    }

    /// FCM `notification`. Android has no subtitle, so there the body of a
    /// group message starts with the sender's name.
    private func notification(_ content: NotificationContent, image: String?, platform: Platform) -> JSONValue {
        var notification = JSONObjectBuilder(capacity: 3)
        notification["title"] = .string(content.title)
        if platform == .android, let subtitle = content.subtitle {
            notification["body"] = .string(subtitle + ": " + content.body)
        } else {
            notification["body"] = .string(content.body)
        }
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

    private func androidAlert(_ content: NotificationContent, identity: IdentityJSON, device: Device, policy: NotificationPolicy) -> JSONValue {
        var androidNotification = JSONObjectBuilder(capacity: 6)
        androidNotification.set("channel_id", policy.androidChannel)
        androidNotification.set("sound", policy.sound)
        androidNotification["tag"] = .string(content.threadId)
        androidNotification["click_action"] = .string(content.category)
        androidNotification["notification_count"] = content.badge.map { .int(Int64($0)) }
        return .object([
            "token": .string(device.token),
            "notification": notification(content, image: content.attachment?.url, platform: .android),
            "data": data(content, identity: identity),
            "android": androidBlock(policy: policy, notification: androidNotification.value),
        ])
    }

    private func iosAlert(_ content: NotificationContent, identity: IdentityJSON, device: Device, policy: NotificationPolicy,
                          apnsHeaders: [String: String]) -> JSONValue {
        .object([
            "token": .string(device.token),
            "notification": notification(content, image: nil, platform: .ios),
            "data": data(content, identity: identity),
            "apns": .object([
                "headers": .object(apnsHeaders.mapValues(JSONValue.string)),
                "payload": apns.alertPayload(content, identity: identity, policy: policy),
            ]),
        ])
    }
}
