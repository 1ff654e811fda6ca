/// The value of a record on `notify.outcomes` (key: user id): what a sink did
/// with one command. The route stage reads these back (rule 16).
public struct NotificationOutcome: Sendable, Hashable, Codable {
    /// Always `"notification.outcome"`.
    public var type: String
    /// A unique id: derived from (command id, outcome) so a repeated report is recognisable.
    public var id: String
    /// When the sink decided (RFC 3339).
    public var at: String
    public var commandId: String
    /// The sink kind that reports: `apns`, `fcm`, `inapp`, `webhook`, `jsonl`, ...
    public var sink: String
    public var recipient: Recipient
    public var conversationId: String?
    public var messageId: String?
    public var outcome: Kind
    /// Why, for anything but `delivered` (e.g. `Unregistered`, `BadDeviceToken`, `timeout`).
    public var reason: String?
    /// The device token the outcome is about, for `token-invalid`.
    public var token: String?

    /// What happened to a command.
    public enum Kind: String, Sendable, Hashable, Codable, CaseIterable {
        case delivered
        case expired
        case tokenInvalid = "token-invalid"
        case failed
        case undeliverableLocal = "undeliverable-local"
        /// Not a result: the sink is about to send the command (written and acknowledged before
        /// the request goes out), so a sink restarted after a crash knows the command may have
        /// reached the device and sends it again as a replacement. Consumers of outcomes skip it.
        case attempting
    }

    public init(
        id: String, at: String, commandId: String, sink: String, recipient: Recipient,
        conversationId: String?, messageId: String?, outcome: Kind, reason: String? = nil,
        token: String? = nil
    ) {
        self.type = "notification.outcome"
        self.id = id
        self.at = at
        self.commandId = commandId
        self.sink = sink
        self.recipient = recipient
        self.conversationId = conversationId
        self.messageId = messageId
        self.outcome = outcome
        self.reason = reason
        self.token = token
    }
}
