/// Turns a notification for one device into a ``NotificationCommand``: the
/// deterministic ids and expiry, the content (fitted to the payload limit)
/// and exactly one rendering: APNs, FCM or local.
struct CommandBuilder {
    let configuration: CoreConfiguration
    private let apns: APNsRenderer
    private let fcm: FCMRenderer

    init(configuration: CoreConfiguration) {
        self.configuration = configuration
        self.apns = APNsRenderer(texts: configuration.texts)
        self.fcm = FCMRenderer(apns: apns)
    }

    /// The command that tells `device` about a message.
    func messageCommand(_ record: FanoutRecord, content: NotificationContent, device: Device, path: DeliveryPath) -> NotificationCommand {
        let policy = configuration.policies[record.notificationType]
        let commandId = DeterministicID.commandId(source: record.messageId, deviceId: device.deviceId, path: path)
        let expiresAt = record.at.adding(seconds: policy.ttlSeconds)
        let (localContent, localRendering) = content.fitted { .object(["content": $0.jsonValue]) }
        var command = NotificationCommand(
            id: commandId, at: record.at.rfc3339, path: path, recipient: recipient(record.recipientId, device),
            conversationId: record.conversationId, messageId: record.messageId, expiresAt: expiresAt.rfc3339,
            content: localContent.jsonValue)
        switch (path, device.provider) {
        case (.local, _):
            command.local = localRendering
        case (.push, .apns):
            let headers = apns.headers(commandId: commandId, policy: policy, expiresAt: expiresAt, appId: device.appId)
            command.apns = APNsRendering(token: device.token, headers: headers, payload: apns.fittedAlert(content, policy: policy).1)
        case (.push, .fcm):
            let headers = device.platform == .ios
                ? apns.headers(commandId: commandId, policy: policy, expiresAt: expiresAt, appId: device.appId) : [:]
            command.fcm = FCMRendering(message: fcm.alertMessage(content, device: device, policy: policy, apnsHeaders: headers))
        }
        return command
    }

    /// The background push that sets `device`'s badge (rule 12), caused by event `source` at `at`.
    func badgeCommand(source: String, at: EventTime, userId: String, update: BadgeUpdate, device: Device) -> NotificationCommand {
        let policy = configuration.policies["badge"]
        let commandId = DeterministicID.commandId(source: source, deviceId: device.deviceId, path: .push)
        let expiresAt = at.adding(seconds: policy.ttlSeconds)
        let headers = apns.headers(commandId: commandId, policy: policy, expiresAt: expiresAt, appId: device.appId)
        var command = NotificationCommand(
            id: commandId, at: at.rfc3339, path: .push, recipient: recipient(userId, device),
            conversationId: update.clearThreadIds.count == 1 ? update.clearThreadIds[0] : nil, messageId: nil,
            expiresAt: expiresAt.rfc3339, content: update.jsonValue)
        switch device.provider {
        case .apns: command.apns = APNsRendering(token: device.token, headers: headers, payload: apns.badgePayload(update))
        case .fcm: command.fcm = FCMRendering(message: fcm.badgeMessage(update, device: device, policy: policy, apnsHeaders: headers))
        }
        return command
    }

    private func recipient(_ userId: String, _ device: Device) -> Recipient {
        Recipient(userId: userId, deviceId: device.deviceId, platform: device.platform, provider: device.provider)
    }
}
