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

extension CoreJSON {
    /// The bytes of a command: the same as `encode(command.jsonValue)`, written
    /// straight from the struct (keys in sorted order by construction), since
    /// this runs once per delivery.
    public static func encode(_ command: NotificationCommand) -> [UInt8] {
        var writer = JSONWriter()
        writer.write(command)
        return writer.bytes
    }
}

extension JSONWriter {
    mutating func write(_ command: NotificationCommand) {
        var first = true
        append(UInt8(ascii: "{"))
        if let apns = command.apns {
            key("apns", &first)
            var inner = true
            append(UInt8(ascii: "{"))
            key("headers", &inner)
            writeStringObject(apns.headers)
            key("payload", &inner)
            write(apns.payload)
            key("token", &inner)
            writeString(apns.token)
            append(UInt8(ascii: "}"))
        }
        key("at", &first)
        writeString(command.at)
        key("content", &first)
        write(command.content)
        if let conversationId = command.conversationId {
            key("conversationId", &first)
            writeString(conversationId)
        }
        key("expiresAt", &first)
        writeString(command.expiresAt)
        if let fcm = command.fcm {
            key("fcm", &first)
            var inner = true
            append(UInt8(ascii: "{"))
            key("message", &inner)
            write(fcm.message)
            append(UInt8(ascii: "}"))
        }
        key("id", &first)
        writeString(command.id)
        if let local = command.local {
            key("local", &first)
            write(local)
        }
        if let messageId = command.messageId {
            key("messageId", &first)
            writeString(messageId)
        }
        key("path", &first)
        writeString(command.path.rawValue)
        key("recipient", &first)
        var inner = true
        append(UInt8(ascii: "{"))
        key("deviceId", &inner)
        writeString(command.recipient.deviceId)
        key("platform", &inner)
        writeString(command.recipient.platform.rawValue)
        key("provider", &inner)
        writeString(command.recipient.provider.rawValue)
        key("userId", &inner)
        writeString(command.recipient.userId)
        append(UInt8(ascii: "}"))
        key("type", &first)
        writeString(command.type)
        append(UInt8(ascii: "}"))
    }

    mutating func writeStringObject(_ members: [String: String]) {
        var first = true
        append(UInt8(ascii: "{"))
        for (name, value) in members.sorted(by: { $0.key < $1.key }) {
            key(name, &first)
            writeString(value)
        }
        append(UInt8(ascii: "}"))
    }

    /// Writes `"key":`, after a comma unless it is the object's first member.
    mutating func key(_ key: String, _ first: inout Bool) {
        if !first { append(UInt8(ascii: ",")) }
        first = false
        writeString(key)
        append(UInt8(ascii: ":"))
    }
}
