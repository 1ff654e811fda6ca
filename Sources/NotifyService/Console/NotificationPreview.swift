import NotifyCore

/// What a device would show for a command: the fields an iOS banner and an Android notification draw.
/// Built from the command's shared `content` (and, for silent pushes, its rendering), so the console
/// shows what the platforms would show.
public struct NotificationPreview: Sendable, Hashable, Codable {
    public var commandId: String
    public var userId: String
    public var deviceId: String
    public var platform: String
    public var provider: String
    public var path: String
    public var title: String
    public var subtitle: String?
    public var body: String
    public var senderName: String?
    public var senderImageURL: String?
    /// The conversation's name when it is a group (iOS shows it as the title context, Android as the conversation title).
    public var groupName: String?
    public var attachmentURL: String?
    public var attachmentMimeType: String?
    /// Button titles of the category's actions, in order.
    public var actions: [String]
    public var badge: Int?
    public var threadId: String?
    /// A background push (badge update, no alert): nothing is shown on screen.
    public var silent: Bool
    public var identityResolved: Bool

    /// The preview of `command`; `actionsByCategory` maps a category to its action button titles.
    public init(_ command: NotificationCommand, actionsByCategory: [String: [String]]) {
        let content = command.content
        commandId = command.id
        userId = command.recipient.userId
        deviceId = command.recipient.deviceId
        platform = command.recipient.platform.rawValue
        provider = command.recipient.provider.rawValue
        path = command.path.rawValue
        title = content["title"]?.stringValue ?? ""
        subtitle = content["subtitle"]?.stringValue
        body = content["body"]?.stringValue ?? ""
        senderName = content["sender"]?["displayName"]?.stringValue ?? content["sender"]?["handle"]?.stringValue
        senderImageURL = content["sender"]?["imageURL"]?.stringValue
        groupName =
            content["conversation"]?["isGroup"] == .bool(true) ? content["conversation"]?["name"]?.stringValue : nil
        attachmentURL = content["attachment"]?["url"]?.stringValue
        attachmentMimeType = content["attachment"]?["mimeType"]?.stringValue
        actions = content["category"]?.stringValue.flatMap { actionsByCategory[$0] } ?? []
        badge = (content["badge"]?.intValue ?? command.apns?.payload["aps"]?["badge"]?.intValue).map { Int($0) }
        threadId = content["threadId"]?.stringValue
        identityResolved = content["identityResolved"] != .bool(false)
        let apnsSilent = command.apns.map { $0.payload["aps"]?["alert"] == nil } ?? false
        let fcmSilent =
            command.fcm.map { $0.message["message"]?["notification"] == nil && $0.message["notification"] == nil }
            ?? false
        silent = command.path == .push && (apnsSilent || fcmSilent)
    }
}
