/// Renders a notification as the `message` of an FCM HTTP v1 `messages:send`
/// request body: `notification`, string-only `data` (the userInfo keys plus
/// `sender` and `conversation` as JSON strings), an `android` block for
/// Android devices and an `apns` block for iOS devices reached through FCM.
/// Messages are written straight to bytes, members in sorted key order.
struct FCMRenderer {
    let apns: APNsRenderer

    /// The message of an alert, after the platform's attachment rule, with the body shortened until
    /// it fits (the `token` addresses the message and does not count, ``PlatformRules/fcmCountedBytes(_:token:)``).
    func alertMessage(
        _ content: NotificationContent, identity: IdentityJSON, device: Device, policy: NotificationPolicy,
        apnsHeaders: EncodedJSON
    ) -> EncodedJSON {
        let limit = PlatformRules.maximumPayloadBytes + PlatformRules.fcmUncountedBytes(token: device.token)
        return content.accepting(on: Self.attachmentPath(device.platform), texts: apns.texts).fitted(limit: limit) {
            accepted in
            EncodedJSON {
                writeAlert(
                    accepted, identity: identity, device: device, policy: policy, apnsHeaders: apnsHeaders, to: &$0)
            }
        }.1
    }

    /// Where an attachment of a message to a device on `platform` is shown.
    static func attachmentPath(_ platform: Platform) -> PlatformRules.AttachmentPath {
        platform == .android ? .androidImage : .serviceExtension
    }

    /// Writes the message of an alert about `content`, which has been through the platform's attachment rule.
    func writeAlert(
        _ content: NotificationContent, identity: IdentityJSON, device: Device, policy: NotificationPolicy,
        apnsHeaders: EncodedJSON, to writer: inout JSONWriter
    ) {
        switch device.platform {
        case .android: writeAndroidAlert(content, identity: identity, device: device, policy: policy, to: &writer)
        case .ios:
            writeIOSAlert(
                content, identity: identity, device: device, policy: policy, apnsHeaders: apnsHeaders, to: &writer)
        }
    }

    /// The data-only message of a background badge push.
    func badgeMessage(_ update: BadgeUpdate, device: Device, policy: NotificationPolicy, apnsHeaders: EncodedJSON)
        -> EncodedJSON
    {
        EncodedJSON { writer in
            writer.writeObject { writer, first in
                switch device.platform {
                case .android:
                    writer.constantKey("android", &first)
                    writeAndroidBlock(policy: policy, to: &writer, notification: nil)
                case .ios:
                    writer.constantKey("apns", &first)
                    writeAPNsBlock(headers: apnsHeaders, to: &writer) { apns.writeBadgePayload(update, to: &$0) }
                }
                writer.constantKey("data", &first)
                writer.writeObject { writer, first in
                    writer.member("badge", quoted: Int64(update.badge), &first)
                    writer.constantKey("clear-thread-ids", &first)
                    writer.writeString(json: EncodedJSON(capacity: 256) { $0.writeStringArray(update.clearThreadIds) })
                    writer.member("type", "badge", &first)
                }
                writer.member("token", device.token, &first)
            }
        }
    }

    /// FCM `data`: string values only.
    private func writeData(_ content: NotificationContent, identity: IdentityJSON, to writer: inout JSONWriter) {
        writer.writeObject { writer, first in
            if let badge = content.badge { writer.member("badge", quoted: Int64(badge), &first) }
            writer.member("category", content.category, &first)
            writer.member("conversation", identity.conversationString, &first)
            writer.member("identity-resolved", content.identityResolved ? "true" : "false", &first)
            writer.member("message-id", content.userInfo.messageId, &first)
            writer.member("sender", identity.senderString, &first)
            writer.member("sender-id", content.userInfo.senderId, &first)
            writer.member("talkroom-id", content.userInfo.talkroomId, &first)
            writer.member("thread-id", content.threadId, &first)
        }
    }

    /// FCM `notification`. Android has no subtitle, so there the body of a
    /// group message starts with the sender's name.
    private func writeNotification(
        _ content: NotificationContent, image: String?, platform: Platform, to writer: inout JSONWriter
    ) {
        writer.writeObject { writer, first in
            writer.constantKey("body", &first)
            writer.append(UInt8(ascii: "\""))
            if platform == .android, let subtitle = content.subtitle {
                writer.writeStringContents(subtitle)
                writer.append(": ")
            }
            writer.writeStringContents(content.body)
            writer.append(UInt8(ascii: "\""))
            writer.member("image", image, &first)
            writer.member("title", content.title, &first)
        }
    }

    private func writeAndroidBlock(
        policy: NotificationPolicy, to writer: inout JSONWriter,
        notification: ((inout JSONWriter) -> Void)?
    ) {
        writer.writeObject { writer, first in
            writer.member("collapse_key", policy.collapseKey, &first)
            if let notification {
                writer.constantKey("notification", &first)
                notification(&writer)
            }
            writer.member("priority", policy.androidPriority == .high ? "HIGH" : "NORMAL", &first)
            writer.constantKey("ttl", &first)
            writer.append(UInt8(ascii: "\""))
            writer.writeInteger(policy.ttlSeconds)
            writer.append("s\"")
        }
    }

    /// `apns` {headers, payload} of a message to an iOS device.
    private func writeAPNsBlock(headers: EncodedJSON, to writer: inout JSONWriter, payload: (inout JSONWriter) -> Void)
    {
        writer.writeObject { writer, first in
            writer.constantKey("headers", &first)
            writer.write(headers)
            writer.constantKey("payload", &first)
            payload(&writer)
        }
    }

    private func writeAndroidAlert(
        _ content: NotificationContent, identity: IdentityJSON, device: Device, policy: NotificationPolicy,
        to writer: inout JSONWriter
    ) {
        writer.writeObject { writer, first in
            writer.constantKey("android", &first)
            writeAndroidBlock(policy: policy, to: &writer) { writer in
                writer.writeObject { writer, first in
                    writer.member("channel_id", policy.androidChannel, &first)
                    writer.member("click_action", policy.androidClickAction, &first)
                    if let badge = content.badge { writer.member("notification_count", Int64(badge), &first) }
                    writer.member("sound", policy.sound, &first)
                    writer.member("tag", content.threadId, &first)
                }
            }
            writer.constantKey("data", &first)
            writeData(content, identity: identity, to: &writer)
            writer.constantKey("notification", &first)
            writeNotification(content, image: content.attachment?.url, platform: .android, to: &writer)
            writer.member("token", device.token, &first)
        }
    }

    private func writeIOSAlert(
        _ content: NotificationContent, identity: IdentityJSON, device: Device, policy: NotificationPolicy,
        apnsHeaders: EncodedJSON, to writer: inout JSONWriter
    ) {
        writer.writeObject { writer, first in
            writer.constantKey("apns", &first)
            writeAPNsBlock(headers: apnsHeaders, to: &writer) {
                apns.writeAlertPayload(content, identity: identity, policy: policy, to: &$0)
            }
            writer.constantKey("data", &first)
            writeData(content, identity: identity, to: &writer)
            writer.constantKey("notification", &first)
            writeNotification(content, image: nil, platform: .ios, to: &writer)
            writer.member("token", device.token, &first)
        }
    }
}
