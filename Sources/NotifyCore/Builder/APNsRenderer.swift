/// Renders a notification for APNs (and the `apns` block of an FCM message to
/// an iOS device): the HTTP/2 headers and the payload laid out as the design
/// brief says: `aps` plus the shared userInfo keys, `sender`, `conversation`
/// and `attachment-url` beside it. Payloads are written straight to bytes,
/// members in sorted key order.
struct APNsRenderer {
    let texts: GenericTexts

    /// `apns-push-type`, `apns-priority`, `apns-expiration`, `apns-topic`, `apns-id`
    /// and `apns-collapse-id` when the policy has one, as a JSON object.
    func headers(commandId: String, policy: NotificationPolicy, expiresAt: EventTime, appId: String) -> EncodedJSON {
        EncodedJSON(capacity: 240) { writer in
            writer.writeObject { writer, first in
                writer.member("apns-collapse-id", policy.collapseKey, &first)
                writer.member("apns-expiration", quoted: expiresAt.unixSeconds, &first)
                writer.member("apns-id", DeterministicID.apnsId(commandId: commandId), &first)
                writer.member("apns-priority", quoted: Int64(policy.apnsPriority), &first)
                writer.member("apns-push-type", policy.pushType.rawValue, &first)
                writer.member("apns-topic", appId, &first)
            }
        }
    }

    /// Writes the payload of an alert about a message. `content` has already
    /// been through the service extension's attachment rule.
    func writeAlertPayload(
        _ content: NotificationContent, identity: IdentityJSON, policy: NotificationPolicy,
        to writer: inout JSONWriter
    ) {
        writer.writeObject { writer, first in
            writer.constantKey("aps", &first)
            writer.writeObject { writer, first in
                writer.constantKey("alert", &first)
                writer.writeObject { writer, first in
                    writer.member("body", content.body, &first)
                    writer.member("subtitle", content.subtitle, &first)
                    writer.member("title", content.title, &first)
                }
                if let badge = content.badge { writer.member("badge", Int64(badge), &first) }
                writer.member("category", content.category, &first)
                writer.member("interruption-level", policy.interruptionLevel?.rawValue, &first)
                if content.attachment != nil { writer.member("mutable-content", 1, &first) }
                writer.member("sound", policy.sound, &first)
                writer.member("thread-id", content.threadId, &first)
            }
            writer.member("attachment-url", content.attachment?.url, &first)
            writer.member("conversation", identity.conversation, &first)
            writer.member("message-id", content.userInfo.messageId, &first)
            writer.member("sender", identity.sender, &first)
            writer.member("sender-id", content.userInfo.senderId, &first)
            writer.member("talkroom-id", content.userInfo.talkroomId, &first)
        }
    }

    /// Writes the payload of a background badge push: `content-available`, the
    /// badge, no alert, and the threads to clear.
    func writeBadgePayload(_ update: BadgeUpdate, to writer: inout JSONWriter) {
        writer.writeObject { writer, first in
            writer.constantKey("aps", &first)
            writer.writeObject { writer, first in
                writer.member("badge", Int64(update.badge), &first)
                writer.member("content-available", 1, &first)
            }
            writer.constantKey("clear-thread-ids", &first)
            writer.writeStringArray(update.clearThreadIds)
        }
    }

    /// The payload of a background badge push.
    func badgePayload(_ update: BadgeUpdate) -> EncodedJSON {
        EncodedJSON { writeBadgePayload(update, to: &$0) }
    }

    /// An alert for an iOS device: the payload of the content after the
    /// attachment rule, with the body shortened until it fits.
    func fittedAlert(_ content: NotificationContent, identity: IdentityJSON, policy: NotificationPolicy) -> EncodedJSON
    {
        content.accepting(on: .serviceExtension, texts: texts).fitted { accepted in
            EncodedJSON { writeAlertPayload(accepted, identity: identity, policy: policy, to: &$0) }
        }.1
    }
}
