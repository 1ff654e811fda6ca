/// Rule 14 for every input the schemas accept (names of 256 characters, URLs of
/// 2,048, in any script): decides, once per message and recipient, the parts
/// that every rendering shares, so that each rendering (local, APNs, FCM to
/// Android, FCM to iOS) fits ``PlatformRules/maximumPayloadBytes`` with its
/// body at the shortest, "…". The body is shortened first, per rendering
/// (``NotificationContent/fitted(limit:render:)``); when even "…" does not
/// fit, this gives up, in order: the title and subtitle beyond
/// ``freeTextFloor`` bytes, the conversation's image, the sender's image, the
/// attachment (the body then says what was sent), the handle and names beyond
/// ``freeTextFloor`` bytes, the handle, the rest of the names, the rest of the
/// title and subtitle. Every rendering of the message embeds the result, so the
/// sender and conversation are the same on every path (the one-builder rule).
struct PayloadBudget {
    let apns: APNsRenderer
    let fcm: FCMRenderer

    /// Title, subtitle and names keep at least this many bytes of JSON while images can go.
    static let freeTextFloor = 64

    /// The device's own part of an FCM message to iOS that the shared parts leave
    /// room for: an `apns-topic` of the schema's 255 characters (a bundle id's ASCII).
    /// The token does not count (``PlatformRules/fcmUncountedBytes(token:)``).
    static let probeAppId = String(repeating: "a", count: 255)

    /// Bytes of the largest rendering that are not the content's texts and ids
    /// (member names, punctuation, headers with the probe app id, badges).
    static let fixedOverhead = 1400

    /// `content` with its shared parts reduced until every rendering fits with
    /// the body "…"; `content` itself when it fits already.
    func budgeted(_ content: NotificationContent, policy: NotificationPolicy, expiresAt: EventTime)
        -> NotificationContent
    {
        guard !Self.surelyFits(content, policy: policy) else { return content }
        let limit = PlatformRules.maximumPayloadBytes
        var content = content
        var excess = largestRendering(content, policy: policy, expiresAt: expiresAt) - limit
        func reduce(_ step: (inout NotificationContent, Int) -> Bool) {
            while excess > 0, step(&content, excess) {
                excess = largestRendering(content, policy: policy, expiresAt: expiresAt) - limit
            }
        }
        let floor = Self.freeTextFloor
        reduce { $0.title.shorten(by: $1, keeping: floor) }
        reduce { $0.subtitle.shorten(by: $1, keeping: floor) }
        reduce { content, _ in content.conversation.imageURL.take() }
        reduce { content, _ in content.sender.imageURL.take() }
        reduce { content, _ in
            guard content.attachment != nil else { return false }
            content = content.withoutAttachment(texts: apns.texts)
            return true
        }
        reduce { $0.sender.handle.shorten(by: $1, keeping: floor) }
        reduce { $0.sender.displayName.shorten(by: $1, keeping: floor) }
        reduce { $0.conversation.name.shorten(by: $1, keeping: floor) }
        reduce { content, _ in content.sender.handle.take() }
        reduce { $0.sender.displayName.shorten(by: $1, keeping: 0) }
        reduce { $0.conversation.name.shorten(by: $1, keeping: 0) }
        reduce { $0.title.shorten(by: $1, keeping: 0) }
        reduce { $0.subtitle.shorten(by: $1, keeping: 0) }
        return content
    }

    /// Whether every rendering of `content` surely fits, from the lengths of its
    /// texts and ids alone (each counted as often as the largest rendering can
    /// hold it), so most messages are never rendered to be measured.
    static func surelyFits(_ content: NotificationContent, policy: NotificationPolicy) -> Bool {
        func length(_ text: String?) -> Int { text.map(CoreJSON.encodedLength(of:)) ?? 0 }
        // Texts and ids at most four times in one rendering.
        let shared =
            length(content.title) + length(content.subtitle) + length(content.threadId) + length(content.category)
            + length(content.userInfo.messageId) + length(content.userInfo.senderId)
            + length(content.userInfo.talkroomId)
            + length(content.attachment?.url) + length(content.attachment?.mimeType)
            + length(policy.sound) + length(policy.androidChannel) + length(policy.androidClickAction)
            + length(policy.collapseKey)
        // The identities: as objects, and again as JSON strings (escaped, at most twice as long) in FCM data.
        let identity =
            length(content.sender.id) + length(content.sender.displayName) + length(content.sender.handle)
            + length(content.sender.imageURL) + length(content.conversation.id) + length(content.conversation.name)
            + length(content.conversation.imageURL)
        return 4 * shared + 3 * identity + fixedOverhead <= PlatformRules.maximumPayloadBytes
    }

    /// The size of the largest rendering of `content` with the body "…", as the platforms count it.
    func largestRendering(_ content: NotificationContent, policy: NotificationPolicy, expiresAt: EventTime) -> Int {
        let identity = IdentityJSON(content)
        func shortest(_ path: PlatformRules.AttachmentPath) -> NotificationContent {
            var accepted = content.accepting(on: path, texts: apns.texts)
            accepted.body = NotificationContent.ellipsis
            return accepted
        }
        let local = CommandBuilder.localRendering(shortest(.serviceExtension), identity: identity).encodedCount
        let headers = apns.headers(commandId: "", policy: policy, expiresAt: expiresAt, appId: Self.probeAppId)
        let messages = [Platform.android, .ios].map { platform in
            let device = Device(deviceId: "", platform: platform, provider: .fcm, token: "", appId: Self.probeAppId)
            let message = EncodedJSON {
                fcm.writeAlert(
                    shortest(FCMRenderer.attachmentPath(platform)), identity: identity, device: device, policy: policy,
                    apnsHeaders: headers, to: &$0)
            }
            return message.encodedCount - PlatformRules.fcmUncountedBytes(token: "")
        }
        // An APNs payload is part of the FCM message to iOS, so no larger.
        return max(local, messages.max()!)
    }
}

extension String {
    /// Shortens the text on a grapheme boundary, with "…", by at least `bytes` of
    /// JSON but to no less than `floor` bytes; `false` when it is that short already.
    fileprivate mutating func shorten(by bytes: Int, keeping floor: Int) -> Bool {
        let length = CoreJSON.encodedLength(of: self) - 2
        guard length > floor, self != NotificationContent.ellipsis else { return false }
        let shortened = NotificationContent.shorten(self, removingAtLeast: Swift.min(bytes, length - floor))
        guard CoreJSON.encodedLength(of: shortened) - 2 < length else { return false }
        self = shortened
        return true
    }
}

extension Optional where Wrapped == String {
    /// ``Swift/String/shorten(by:keeping:)`` of the text, if there is one.
    fileprivate mutating func shorten(by bytes: Int, keeping floor: Int) -> Bool {
        guard var text = self, text.shorten(by: bytes, keeping: floor) else { return false }
        self = text
        return true
    }

    /// Removes the text; `false` when there was none.
    fileprivate mutating func take() -> Bool {
        guard self != nil else { return false }
        self = nil
        return true
    }
}
