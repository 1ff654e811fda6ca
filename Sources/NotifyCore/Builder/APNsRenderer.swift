/// Renders a notification for APNs (and the `apns` block of an FCM message to
/// an iOS device): the HTTP/2 headers and the payload laid out as the design
/// brief says: `aps` plus the shared userInfo keys, `sender`, `conversation`
/// and `attachment-url` beside it.
struct APNsRenderer {
    let texts: GenericTexts

    /// `apns-push-type`, `apns-priority`, `apns-expiration`, `apns-topic`, `apns-id`
    /// and `apns-collapse-id` when the policy has one.
    func headers(commandId: String, policy: NotificationPolicy, expiresAt: EventTime, appId: String) -> [String: String] {
        var headers = [
            "apns-push-type": policy.pushType.rawValue,
            "apns-priority": String(policy.apnsPriority),
            "apns-expiration": String(expiresAt.unixSeconds),
            "apns-topic": appId,
            "apns-id": DeterministicID.apnsId(commandId: commandId),
        ]
        if let collapseKey = policy.collapseKey { headers["apns-collapse-id"] = collapseKey }
        return headers
    }

    /// The payload of an alert about a message. `content` has already been
    /// through the service extension's attachment rule.
    func alertPayload(_ content: NotificationContent, identity: IdentityJSON, policy: NotificationPolicy) -> JSONValue {
        var alert = JSONObjectBuilder(capacity: 3)
        alert["title"] = .string(content.title)
        alert.set("subtitle", content.subtitle)
        alert["body"] = .string(content.body)
        var aps = JSONObjectBuilder(capacity: 8)
        aps["alert"] = alert.value
        aps["badge"] = content.badge.map { .int(Int64($0)) }
        aps.set("sound", policy.sound)
        aps["thread-id"] = .string(content.threadId)
        aps["category"] = .string(content.category)
        if content.attachment != nil { aps["mutable-content"] = .int(1) }
        aps.set("interruption-level", policy.interruptionLevel?.rawValue)
        var payload = JSONObjectBuilder(capacity: 8)
        payload["aps"] = aps.value
        for (key, value) in content.userInfo.pairs { payload[key] = .string(value) }
        payload["sender"] = identity.sender
        payload["conversation"] = identity.conversation
        payload.set("attachment-url", content.attachment?.url)
        return payload.value
    }

    /// The payload of a background badge push: `content-available`, the badge,
    /// no alert, and the threads to clear.
    func badgePayload(_ update: BadgeUpdate) -> JSONValue {
        .object([
            "aps": .object(["content-available": .int(1), "badge": .int(Int64(update.badge))]),
            "clear-thread-ids": .array(update.clearThreadIds.map(JSONValue.string)),
        ])
    }

    /// An alert for an iOS device: the content after the attachment rule,
    /// with the body shortened until the payload fits.
    func fittedAlert(_ content: NotificationContent, identity: IdentityJSON, policy: NotificationPolicy) -> (NotificationContent, JSONValue) {
        content.accepting(on: .serviceExtension, texts: texts).fitted { alertPayload($0, identity: identity, policy: policy) }
    }
}
