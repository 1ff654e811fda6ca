/// What the platforms accept (rules 10 and 14), in one place.
public enum PlatformRules {
    /// The largest payload APNs and FCM accept, and the budget of a local rendering, in bytes.
    public static let maximumPayloadBytes = 4096

    /// Which platform path an attachment would travel.
    public enum AttachmentPath: Sendable {
        /// A `UNNotificationAttachment` on iOS: made by the notification service extension from an
        /// APNs payload (by APNs or FCM), and by the app for a local notification (seed 000).
        case serviceExtension
        /// FCM `notification.image` on Android.
        case androidImage
    }

    /// Whether the platform shows an attachment of this declared type and size.
    /// Service extension: images 10 MB, audio 5 MB, video 50 MB (UNNotificationAttachment);
    /// Android: JPEG, PNG, BMP images up to 1 MB.
    public static func accepts(_ attachment: Attachment, on path: AttachmentPath) -> Bool {
        let type = attachment.mimeType.lowercased()
        let limit: Int64
        switch path {
        case .serviceExtension:
            switch type {
            case "image/jpeg", "image/gif", "image/png": limit = 10 * 1024 * 1024
            case "audio/aiff", "audio/x-aiff", "audio/wav", "audio/x-wav", "audio/mpeg", "audio/mp3", "audio/mp4",
                "audio/m4a", "audio/x-m4a":
                limit = 5 * 1024 * 1024
            case "video/mpeg", "video/mp4", "video/x-msvideo", "video/avi", "video/mpeg2": limit = 50 * 1024 * 1024
            default: return false
            }
        case .androidImage:
            switch type {
            case "image/jpeg", "image/png", "image/bmp": limit = 1024 * 1024
            default: return false
            }
        }
        return attachment.bytes <= limit
    }

    /// The bytes of an FCM message that do not count against ``maximumPayloadBytes``: the `token`
    /// member, which addresses the message (the schemas allow tokens of up to 4,096 characters).
    /// Everything else counts, the `android` block and the APNs headers too, which is more than FCM counts.
    public static func fcmUncountedBytes(token: String) -> Int {
        ",\"token\":".utf8.count + CoreJSON.encodedLength(of: token)
    }

    /// Keys FCM refuses in `data`.
    public static func isReservedFCMDataKey(_ key: String) -> Bool {
        ["from", "notification", "message_type", "collapse_key"].contains(key)
            || key.hasPrefix("google.") || key.hasPrefix("gcm.")
    }

    /// Everything in a built command that a platform would refuse (rule 14), or
    /// that breaks `command.schema.json`'s non-empty texts or shows an attachment
    /// of a type or size the platform refuses (rule 10); empty when the command
    /// is fine. The tests run it over every command.
    public static func violations(of command: NotificationCommand) -> [String] {
        var problems: [String] = []
        let content = command.content
        let isMessage = content["title"] != nil
        if isMessage {
            problems += contentViolations(content, label: "content")
        }
        if let apns = command.apns {
            problems += apnsViolations(headers: apns.headers, payload: apns.payload, content: content, label: "apns")
        }
        if let message = command.fcm?.message {
            let size = CoreJSON.encode(message).count - fcmUncountedBytes(token: message["token"]?.stringValue ?? "")
            if size > maximumPayloadBytes {
                problems.append("fcm message is \(size) bytes without its token, over \(maximumPayloadBytes)")
            }
            if let notification = message["notification"] {
                problems += emptyTexts(notification, ["title", "body"], label: "fcm notification")
                if let image = notification["image"]?.stringValue, let attachment = attachment(in: content),
                    attachment.url == image,
                    !accepts(attachment, on: .androidImage)
                {
                    problems.append(
                        "fcm notification.image is a \(attachment.mimeType) of \(attachment.bytes) bytes, which Android refuses"
                    )
                }
            }
            if case .object(let data)? = message["data"] {
                for (key, value) in data {
                    if value.stringValue == nil { problems.append("fcm data \"\(key)\" is not a string") }
                    if isReservedFCMDataKey(key) { problems.append("fcm data key \"\(key)\" is reserved") }
                }
            }
            if let ttl = message["android"]?["ttl"]?.stringValue {
                let seconds = Int64(ttl.dropLast()) ?? -1
                if !ttl.hasSuffix("s") || !(0...NotificationPolicy.maximumTTLSeconds).contains(seconds) {
                    problems.append("fcm android.ttl \(ttl) is outside 0…\(NotificationPolicy.maximumTTLSeconds)s")
                }
            }
            if let collapse = message["android"]?["collapse_key"]?.stringValue,
                collapse.utf8.count > NotificationPolicy.maximumCollapseKeyBytes
            {
                problems.append("fcm collapse_key over \(NotificationPolicy.maximumCollapseKeyBytes) bytes")
            }
            if let apns = message["apns"], case .object(let headerValues)? = apns["headers"],
                let payload = apns["payload"]
            {
                let headers = headerValues.compactMapValues(\.stringValue)
                problems += apnsViolations(headers: headers, payload: payload, content: content, label: "fcm apns")
                if message["notification"] == nil, headers["apns-priority"] != "5" {
                    problems.append("fcm data-only message to iOS without apns-priority 5")
                }
            }
        }
        if let local = command.local {
            let size = CoreJSON.encode(local).count
            if size > maximumPayloadBytes {
                problems.append("local rendering is \(size) bytes, over \(maximumPayloadBytes)")
            }
            if isMessage {
                if local["content"] != content { problems.append("local content differs from the command's content") }
                problems += contentViolations(local["content"] ?? .null, label: "local content")
            }
        }
        return problems
    }

    /// The texts `command.schema.json` requires non-empty, and an attachment the app could not show
    /// in a local notification (the same `UNNotificationAttachment` rule as the service extension).
    private static func contentViolations(_ content: JSONValue, label: String) -> [String] {
        var problems = emptyTexts(content, ["title", "subtitle", "body", "threadId", "category"], label: label)
        problems += emptyTexts(content["sender"] ?? .null, ["id", "displayName", "handle"], label: "\(label) sender")
        problems += emptyTexts(content["conversation"] ?? .null, ["id", "name"], label: "\(label) conversation")
        if let attachment = attachment(in: content), !accepts(attachment, on: .serviceExtension) {
            problems.append(
                "\(label) attachment is a \(attachment.mimeType) of \(attachment.bytes) bytes, which iOS refuses")
        }
        return problems
    }

    /// The members of `object` among `keys` that are present but empty or not strings (`minLength: 1`).
    private static func emptyTexts(_ object: JSONValue, _ keys: [String], label: String) -> [String] {
        keys.compactMap { key in
            guard let value = object[key] else { return nil }
            return value.stringValue?.isEmpty == false ? nil : "\(label) \(key) is empty or not a string"
        }
    }

    private static func attachment(in content: JSONValue) -> Attachment? {
        guard let url = content["attachment"]?["url"]?.stringValue,
            let type = content["attachment"]?["mimeType"]?.stringValue,
            let bytes = content["attachment"]?["bytes"]?.intValue
        else { return nil }
        return Attachment(url: url, mimeType: type, bytes: bytes)
    }

    private static func apnsViolations(headers: [String: String], payload: JSONValue, content: JSONValue, label: String)
        -> [String]
    {
        var problems: [String] = []
        let size = CoreJSON.encode(payload).count
        if size > maximumPayloadBytes {
            problems.append("\(label) payload is \(size) bytes, over \(maximumPayloadBytes)")
        }
        if let alert = payload["aps"]?["alert"] {
            problems += emptyTexts(alert, ["title", "subtitle", "body"], label: "\(label) alert")
        }
        if let url = payload["attachment-url"]?.stringValue, attachment(in: content)?.url != url {
            problems.append("\(label) attachment-url is not the content's attachment, which iOS shows")
        }
        if headers["apns-push-type"] == "background", headers["apns-priority"] != "5" {
            problems.append("\(label) background push with apns-priority \(headers["apns-priority"] ?? "none")")
        }
        if let collapse = headers["apns-collapse-id"], collapse.utf8.count > NotificationPolicy.maximumCollapseKeyBytes
        {
            problems.append("\(label) apns-collapse-id over \(NotificationPolicy.maximumCollapseKeyBytes) bytes")
        }
        return problems
    }
}

extension NotificationContent {
    /// The content as a platform shows it: an attachment the platform refuses
    /// is dropped and the body says what was sent (rule 10).
    func accepting(on path: PlatformRules.AttachmentPath, texts: GenericTexts) -> NotificationContent {
        guard let attachment, !PlatformRules.accepts(attachment, on: path) else { return self }
        return withoutAttachment(texts: texts)
    }

    /// The content without its attachment, the body saying what was sent ("Sent a file: …").
    func withoutAttachment(texts: GenericTexts) -> NotificationContent {
        guard attachment != nil else { return self }
        var content = self
        content.attachment = nil
        let description = texts.sentDescription(kind)
        content.body = body == description ? description : description + ": " + body
        return content
    }

    /// The content with the body shortened on a grapheme boundary, with "…",
    /// until `render` of it fits in `limit` bytes (rule 14), or the body is
    /// "…" (never empty: ``budgeted(texts:measure:)`` made sure "…" fits). The body may
    /// appear several times in a rendering (FCM to iOS); each pass removes its share of the excess from each copy.
    func fitted(limit: Int = PlatformRules.maximumPayloadBytes, render: (NotificationContent) -> EncodedJSON) -> (
        NotificationContent, EncodedJSON
    ) {
        fitting(limit: limit, render: render)
    }

    /// ``fitted(limit:render:)`` for a rendering built as a tree.
    func fitted(limit: Int = PlatformRules.maximumPayloadBytes, render: (NotificationContent) -> JSONValue) -> (
        NotificationContent, JSONValue
    ) {
        fitting(limit: limit, render: render)
    }

    private func fitting<Rendering: EncodedSizeMeasurable>(
        limit: Int, render: (NotificationContent) -> Rendering
    ) -> (NotificationContent, Rendering) {
        var content = self
        var rendered = render(content)
        var size = rendered.encodedSize
        guard size > limit else { return (content, rendered) }
        var withoutBody = content
        withoutBody.body = ""
        let bodyLength = max(1, CoreJSON.encodedLength(of: body) - 2)
        let copies = max(1, (size - render(withoutBody).encodedSize) / bodyLength)
        while size > limit, content.body != Self.ellipsis {
            content.body = Self.shorten(content.body, removingAtLeast: (size - limit + copies - 1) / copies)
            rendered = render(content)
            size = rendered.encodedSize
        }
        return (content, rendered)
    }

    static let ellipsis = "…"

    /// `text` cut on a grapheme boundary and ended with "…", so that its JSON
    /// form is at least `bytes` shorter, or "…" if nothing else is left (never empty).
    static func shorten(_ text: String, removingAtLeast bytes: Int) -> String {
        let ellipsisLength = CoreJSON.encodedLength(of: ellipsis) - 2
        let base = text.hasSuffix(ellipsis) ? text.dropLast() : Substring(text)
        let budget = CoreJSON.encodedLength(of: text) - 2 - bytes - ellipsisLength
        guard budget > 0 else { return ellipsis }
        var used = 0
        var end = base.startIndex
        for character in base {
            var length = 0
            for byte in character.utf8 { length += JSONWriter.escapedLength(byte) }
            guard used + length <= budget else { break }
            used += length
            end = base.index(after: end)
        }
        return base[..<end] + ellipsis
    }
}

/// A rendering whose encoded size is known, for ``NotificationContent/fitted(limit:render:)``.
protocol EncodedSizeMeasurable {
    /// The number of bytes its JSON encoding takes.
    var encodedSize: Int { get }
}

extension JSONValue: EncodedSizeMeasurable {
    var encodedSize: Int { CoreJSON.encodedLength(self) }
}

extension EncodedJSON: EncodedSizeMeasurable {
    var encodedSize: Int { encodedCount }
}
