extension Recipient: JSONRepresentable {
    public var jsonValue: JSONValue {
        .object([
            "userId": .string(userId), "deviceId": .string(deviceId),
            "platform": .string(platform.rawValue), "provider": .string(provider.rawValue),
        ])
    }
}

extension NotificationCommand: JSONRepresentable {
    /// The same shape as the `Codable` form, for ``CoreJSON/encode(_:)``:
    /// sorted keys, absent optionals left out.
    public var jsonValue: JSONValue {
        var object = JSONObjectBuilder(capacity: 12)
        object["type"] = .string(type)
        object["id"] = .string(id)
        object["at"] = .string(at)
        object["path"] = .string(path.rawValue)
        object["recipient"] = recipient.jsonValue
        object.set("conversationId", conversationId)
        object.set("messageId", messageId)
        object["expiresAt"] = .string(expiresAt)
        object["content"] = content
        if let apns {
            object["apns"] = .object([
                "token": .string(apns.token), "headers": .object(apns.headers.mapValues(JSONValue.string)), "payload": apns.payload,
            ])
        }
        if let fcm { object["fcm"] = .object(["message": fcm.message]) }
        object["local"] = local
        return object.value
    }
}

extension NotificationOutcome: JSONRepresentable {
    /// The same shape as the `Codable` form, for ``CoreJSON/encode(_:)``.
    public var jsonValue: JSONValue {
        var object = JSONObjectBuilder(capacity: 11)
        object["type"] = .string(type)
        object["id"] = .string(id)
        object["at"] = .string(at)
        object["commandId"] = .string(commandId)
        object["sink"] = .string(sink)
        object["recipient"] = recipient.jsonValue
        object.set("conversationId", conversationId)
        object.set("messageId", messageId)
        object["outcome"] = .string(outcome.rawValue)
        object.set("reason", reason)
        object.set("token", token)
        return object.value
    }
}
