import NotifyCore

/// The sinks' records read and written with the core's hand-written JSON (``CoreJSON``), which
/// is several times cheaper than `Codable` on the hot path. The shapes are the `Codable` ones of
/// `NotifyCore` (`Schemas/command.schema.json`, `Schemas/outcome.schema.json`).
extension NotificationCommand {
    /// Reads a command from a `notify.commands` record value.
    init(record bytes: [UInt8]) throws(InvalidRecord) {
        let members = try InvalidRecord.object(parsing: bytes)
        func string(_ key: String, in members: [String: JSONValue]) throws(InvalidRecord) -> String {
            guard let value = members[key]?.stringValue else {
                throw InvalidRecord("\"\(key)\" is missing or not a string")
            }
            return value
        }
        func optionalString(_ key: String, in members: [String: JSONValue]) throws(InvalidRecord) -> String? {
            guard let value = members[key], value != .null else { return nil }
            guard let text = value.stringValue else { throw InvalidRecord("\"\(key)\" is not a string") }
            return text
        }
        guard members["type"] == .string("notification.command") else {
            throw InvalidRecord("\"type\" is not notification.command")
        }
        guard let path = DeliveryPath(rawValue: try string("path", in: members)) else {
            throw InvalidRecord("\"path\" is not push or local")
        }
        guard case .object(let recipient)? = members["recipient"] else {
            throw InvalidRecord("\"recipient\" is missing")
        }
        guard let platform = Platform(rawValue: try string("platform", in: recipient)),
            let provider = PushProvider(rawValue: try string("provider", in: recipient))
        else { throw InvalidRecord("\"recipient\" has an unknown platform or provider") }
        guard let content = members["content"] else { throw InvalidRecord("\"content\" is missing") }
        var apns: APNsRendering?
        if let value = members["apns"], value != .null {
            guard case .object(let rendering) = value, case .object(let headerValues)? = rendering["headers"],
                let payload = rendering["payload"]
            else { throw InvalidRecord("\"apns\" needs token, headers and payload") }
            var headers: [String: String] = [:]
            for (name, value) in headerValues {
                guard let text = value.stringValue else {
                    throw InvalidRecord("apns header \"\(name)\" is not a string")
                }
                headers[name] = text
            }
            apns = APNsRendering(token: try string("token", in: rendering), headers: headers, payload: payload)
        }
        var fcm: FCMRendering?
        if let value = members["fcm"], value != .null {
            guard let message = value["message"] else { throw InvalidRecord("\"fcm\" needs a message") }
            fcm = FCMRendering(message: message)
        }
        let local = members["local"].flatMap { $0 == .null ? nil : $0 }
        self.init(
            id: try string("id", in: members), at: try string("at", in: members), path: path,
            recipient: Recipient(
                userId: try string("userId", in: recipient), deviceId: try string("deviceId", in: recipient),
                platform: platform,
                provider: provider),
            conversationId: try optionalString("conversationId", in: members),
            messageId: try optionalString("messageId", in: members),
            expiresAt: try string("expiresAt", in: members), content: content, apns: apns, fcm: fcm, local: local
        )
    }
}

extension NotificationOutcome {
    /// Reads the parts of a `notify.outcomes` record the ledger needs; `nil` for another kind's.
    static func ledgerEntry(record bytes: [UInt8], kind: String) throws(InvalidRecord) -> LedgerEntry? {
        let members = try InvalidRecord.object(parsing: bytes)
        guard members["sink"]?.stringValue == kind else { return nil }
        guard let commandId = members["commandId"]?.stringValue,
            let outcome = members["outcome"]?.stringValue.flatMap(Kind.init(rawValue:)),
            let at = members["at"]?.stringValue
        else { throw InvalidRecord("an outcome needs commandId, outcome and at") }
        return LedgerEntry(commandId: commandId, outcome: outcome, at: at, token: members["token"]?.stringValue)
    }
}

/// What the ledger keeps of an outcome.
struct LedgerEntry: Sendable {
    var commandId: String
    var outcome: NotificationOutcome.Kind
    var at: String
    var token: String?
}

/// A record that is not what its topic should hold.
struct InvalidRecord: Error, CustomStringConvertible {
    let description: String

    init(_ description: String) {
        self.description = description
    }

    /// The members of the JSON object in `bytes`.
    static func object(parsing bytes: [UInt8]) throws(InvalidRecord) -> [String: JSONValue] {
        let value: JSONValue
        do {
            value = try CoreJSON.parse(bytes)
        } catch {
            throw InvalidRecord("\(error)")
        }
        guard case .object(let members) = value else { throw InvalidRecord("not a JSON object") }
        return members
    }
}
