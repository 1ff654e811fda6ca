/// What the platforms accept (rules 10 and 14), in one place.
public enum PlatformRules {
    /// The largest payload APNs and FCM accept, and the budget of a local rendering, in bytes.
    public static let maximumPayloadBytes = 4096

    /// Which platform path an attachment would travel.
    public enum AttachmentPath: Sendable {
        /// An APNs payload for the notification service extension (iOS, by APNs or FCM).
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
                 "audio/m4a", "audio/x-m4a": limit = 5 * 1024 * 1024
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

    /// Keys FCM refuses in `data`.
    public static func isReservedFCMDataKey(_ key: String) -> Bool {
        ["from", "notification", "message_type", "collapse_key"].contains(key)
            || key.hasPrefix("google.") || key.hasPrefix("gcm.")
    }

    /// Everything in a built command that a platform would refuse (rule 14);
    /// empty when the command is fine. The tests run it over every command.
    public static func violations(of command: NotificationCommand) -> [String] {
        var problems: [String] = []
        if let apns = command.apns {
            problems += apnsViolations(headers: apns.headers, payload: apns.payload, label: "apns")
        }
        if let message = command.fcm?.message {
            let size = CoreJSON.encode(message).count
            if size > maximumPayloadBytes { problems.append("fcm message is \(size) bytes, over \(maximumPayloadBytes)") }
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
               collapse.utf8.count > NotificationPolicy.maximumCollapseKeyBytes {
                problems.append("fcm collapse_key over \(NotificationPolicy.maximumCollapseKeyBytes) bytes")
            }
            if let apns = message["apns"], case .object(let headerValues)? = apns["headers"], let payload = apns["payload"] {
                let headers = headerValues.compactMapValues(\.stringValue)
                problems += apnsViolations(headers: headers, payload: payload, label: "fcm apns")
                if message["notification"] == nil, headers["apns-priority"] != "5" {
                    problems.append("fcm data-only message to iOS without apns-priority 5")
                }
            }
        }
        if let local = command.local {
            let size = CoreJSON.encode(local).count
            if size > maximumPayloadBytes { problems.append("local rendering is \(size) bytes, over \(maximumPayloadBytes)") }
        }
        return problems
    }

    private static func apnsViolations(headers: [String: String], payload: JSONValue, label: String) -> [String] {
        var problems: [String] = []
        let size = CoreJSON.encode(payload).count
        if size > maximumPayloadBytes { problems.append("\(label) payload is \(size) bytes, over \(maximumPayloadBytes)") }
        if headers["apns-push-type"] == "background", headers["apns-priority"] != "5" {
            problems.append("\(label) background push with apns-priority \(headers["apns-priority"] ?? "none")")
        }
        if let collapse = headers["apns-collapse-id"], collapse.utf8.count > NotificationPolicy.maximumCollapseKeyBytes {
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
        var content = self
        content.attachment = nil
        let description = texts.sentDescription(kind)
        content.body = body == description ? description : description + ": " + body
        return content
    }

    /// The content with the body shortened on a grapheme boundary, with "…",
    /// until `render` of it fits in `limit` bytes (rule 14). The body may
    /// appear several times in a rendering (FCM to iOS); each pass removes its share of the excess from each copy.
    func fitted(limit: Int = PlatformRules.maximumPayloadBytes, render: (NotificationContent) -> EncodedJSON) -> (NotificationContent, EncodedJSON) {
        fitting(limit: limit, render: render)
    }

    /// ``fitted(limit:render:)`` for a rendering built as a tree.
    func fitted(limit: Int = PlatformRules.maximumPayloadBytes, render: (NotificationContent) -> JSONValue) -> (NotificationContent, JSONValue) {
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
        while size > limit, !content.body.isEmpty {
            content.body = Self.shorten(content.body, removingAtLeast: (size - limit + copies - 1) / copies)
            rendered = render(content)
            size = rendered.encodedSize
        }
        return (content, rendered)
    }

    static let ellipsis = "…"

    /// `text` cut on a grapheme boundary and ended with "…", so that its JSON
    /// form is at least `bytes` shorter (empty if nothing is left).
    static func shorten(_ text: String, removingAtLeast bytes: Int) -> String {
        let ellipsisLength = CoreJSON.encodedLength(of: ellipsis) - 2
        let base = text.hasSuffix(ellipsis) ? text.dropLast() : Substring(text)
        let budget = CoreJSON.encodedLength(of: text) - 2 - bytes - ellipsisLength
        guard budget > 0 else { return text == ellipsis || budget + ellipsisLength <= 0 ? "" : ellipsis }
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
