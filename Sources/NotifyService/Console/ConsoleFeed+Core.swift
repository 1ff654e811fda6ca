import NotifyCore

extension ConsoleFeed {
    /// A feed whose previews show the action buttons of `categories` (from `Schemas/categories.json`).
    public convenience init(capacity: Int = 1000, categories: NotificationCategories) {
        self.init(capacity: capacity, actionsByCategory: categories.byIdentifier.mapValues { $0.actions.map(\.title) })
    }
}

extension ConsoleEntry {
    /// The console entry of a stage's suppression decision.
    public static func decision(_ decision: Decision) -> ConsoleEntry {
        .decision(
            userId: decision.userId, deviceId: decision.deviceId, conversationId: decision.conversationId,
            messageId: decision.messageId, reason: decision.reason.rawValue, at: decision.at.rfc3339)
    }
}
