/// Turns a notification for one device into a ``NotificationCommand``: the
/// deterministic ids and expiry, the content (fitted to the payload limit)
/// and exactly one rendering: APNs, FCM or local.
struct CommandBuilder {
    let configuration: CoreConfiguration
    private let apns: APNsRenderer
    private let fcm: FCMRenderer
    private let budget: PayloadBudget

    init(configuration: CoreConfiguration) {
        self.configuration = configuration
        self.apns = APNsRenderer(texts: configuration.texts)
        self.fcm = FCMRenderer(apns: apns)
        self.budget = PayloadBudget(apns: apns, fcm: fcm)
    }

    /// What every command about one message for one recipient shares, built
    /// once for all the recipient's devices: policy, times, the content within
    /// the payload budget and its identity JSON, and that content fitted for
    /// local delivery (also the command's `content`).
    /// A class: it is handed to every device's command, and copying its many
    /// parts for each would cost more than building them.
    final class PreparedMessage: Sendable {
        let record: FanoutRecord
        let content: NotificationContent
        let policy: NotificationPolicy
        let at: String
        let expiresAt: EventTime
        let expiresAtText: String
        let identity: IdentityJSON
        let contentJSON: EncodedJSON
        let localRendering: EncodedJSON

        init(
            record: FanoutRecord, content: NotificationContent, policy: NotificationPolicy, at: String,
            expiresAt: EventTime,
            expiresAtText: String, identity: IdentityJSON, contentJSON: EncodedJSON, localRendering: EncodedJSON
        ) {
            self.record = record
            self.content = content
            self.policy = policy
            self.at = at
            self.expiresAt = expiresAt
            self.expiresAtText = expiresAtText
            self.identity = identity
            self.contentJSON = contentJSON
            self.localRendering = localRendering
        }
    }

    private static let localRenderingPrefix: StaticString = "{\"content\":"

    /// The local rendering, `{"content": <content>}`.
    static func localRendering(_ content: NotificationContent, identity: IdentityJSON) -> EncodedJSON {
        EncodedJSON { writer in
            writer.append(localRenderingPrefix)
            content.write(to: &writer, identity: identity)
            writer.append(UInt8(ascii: "}"))
        }
    }

    /// Prepares the commands about `record` with `content` (badge and previews already applied).
    func prepare(_ record: FanoutRecord, content: NotificationContent) -> PreparedMessage {
        let policy = configuration.policies[record.notificationType]
        let expiresAt = record.at.adding(seconds: policy.ttlSeconds)
        let content = budget.budgeted(content, policy: policy, expiresAt: expiresAt)
        let identity = IdentityJSON(content)
        // The local rendering: the app makes a UNNotificationAttachment of the attachment, as the
        // service extension does, so a type it refuses is dropped here too; the content fitted to the
        // limit inside it. The command's `content` is those same bytes.
        let (_, localRendering) = content.accepting(on: .serviceExtension, texts: configuration.texts).fitted {
            Self.localRendering($0, identity: identity)
        }
        let contentJSON = localRendering.part(
            Self.localRenderingPrefix.utf8CodeUnitCount..<localRendering.encodedCount - 1)
        return PreparedMessage(
            record: record, content: content, policy: policy, at: record.at.rfc3339, expiresAt: expiresAt,
            expiresAtText: expiresAt.rfc3339, identity: identity, contentJSON: contentJSON,
            localRendering: localRendering)
    }

    /// The command that tells `device` about a message.
    func messageCommand(_ record: FanoutRecord, content: NotificationContent, device: Device, path: DeliveryPath)
        -> NotificationCommand
    {
        messageCommand(prepare(record, content: content), device: device, path: path)
    }

    /// The command that tells `device` about a prepared message.
    func messageCommand(_ message: PreparedMessage, device: Device, path: DeliveryPath) -> NotificationCommand {
        let record = message.record
        let commandId = DeterministicID.commandId(source: record.messageId, deviceId: device.deviceId, path: path)
        var command = NotificationCommand(
            id: commandId, at: message.at, path: path, recipient: recipient(record.recipientId, device),
            conversationId: record.conversationId, messageId: record.messageId, expiresAt: message.expiresAtText,
            content: message.contentJSON)
        switch (path, device.provider) {
        case (.local, _):
            command.localJSON = message.localRendering
        case (.push, .apns):
            let headers = apns.headers(
                commandId: commandId, policy: message.policy, expiresAt: message.expiresAt, appId: device.appId)
            command.apns = APNsRendering(
                token: device.token, headers: headers,
                payload: apns.fittedAlert(message.content, identity: message.identity, policy: message.policy))
        case (.push, .fcm):
            let headers =
                device.platform == .ios
                ? apns.headers(
                    commandId: commandId, policy: message.policy, expiresAt: message.expiresAt, appId: device.appId)
                : EncodedJSON(.object([:]))
            command.fcm = FCMRendering(
                message: fcm.alertMessage(
                    message.content, identity: message.identity, device: device,
                    policy: message.policy, apnsHeaders: headers))
        }
        return command
    }

    /// The background push that sets `device`'s badge (rule 12), caused by event `source` at `at`.
    func badgeCommand(source: String, at: EventTime, userId: String, update: BadgeUpdate, device: Device)
        -> NotificationCommand
    {
        let policy = configuration.policies["badge"]
        let commandId = DeterministicID.commandId(source: source, deviceId: device.deviceId, path: .push)
        let expiresAt = at.adding(seconds: policy.ttlSeconds)
        let headers = apns.headers(commandId: commandId, policy: policy, expiresAt: expiresAt, appId: device.appId)
        var command = NotificationCommand(
            id: commandId, at: at.rfc3339, path: .push, recipient: recipient(userId, device),
            conversationId: update.clearThreadIds.count == 1 ? update.clearThreadIds[0] : nil, messageId: nil,
            expiresAt: expiresAt.rfc3339, content: update.jsonValue)
        switch device.provider {
        case .apns:
            command.apns = APNsRendering(token: device.token, headers: headers, payload: apns.badgePayload(update))
        case .fcm:
            command.fcm = FCMRendering(
                message: fcm.badgeMessage(update, device: device, policy: policy, apnsHeaders: headers))
        }
        return command
    }

    private func recipient(_ userId: String, _ device: Device) -> Recipient {
        Recipient(userId: userId, deviceId: device.deviceId, platform: device.platform, provider: device.provider)
    }
}
