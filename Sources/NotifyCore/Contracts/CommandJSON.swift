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
            constantKey("apns", &first)
            var inner = true
            append(UInt8(ascii: "{"))
            constantKey("headers", &inner)
            writeStringObject(apns.headers)
            constantKey("payload", &inner)
            write(apns.payload)
            constantKey("token", &inner)
            writeString(apns.token)
            append(UInt8(ascii: "}"))
        }
        constantKey("at", &first)
        writeString(command.at)
        constantKey("content", &first)
        let contentBytes = writtenRange { $0.write(command.content) }
        if let conversationId = command.conversationId {
            constantKey("conversationId", &first)
            writeString(conversationId)
        }
        constantKey("expiresAt", &first)
        writeString(command.expiresAt)
        if let fcm = command.fcm {
            constantKey("fcm", &first)
            var inner = true
            append(UInt8(ascii: "{"))
            constantKey("message", &inner)
            write(fcm.message)
            append(UInt8(ascii: "}"))
        }
        constantKey("id", &first)
        writeString(command.id)
        if let local = command.local {
            constantKey("local", &first)
            if case .object(let members) = local, members.count == 1, members["content"] == command.content {
                // `{"content": <the command's content>}`, the usual local rendering: its bytes are already written.
                append("{\"content\":")
                appendCopy(of: contentBytes)
                append(UInt8(ascii: "}"))
            } else {
                write(local)
            }
        }
        if let messageId = command.messageId {
            constantKey("messageId", &first)
            writeString(messageId)
        }
        constantKey("path", &first)
        writeString(command.path.rawValue)
        constantKey("recipient", &first)
        var inner = true
        append(UInt8(ascii: "{"))
        constantKey("deviceId", &inner)
        writeString(command.recipient.deviceId)
        constantKey("platform", &inner)
        writeString(command.recipient.platform.rawValue)
        constantKey("provider", &inner)
        writeString(command.recipient.provider.rawValue)
        constantKey("userId", &inner)
        writeString(command.recipient.userId)
        append(UInt8(ascii: "}"))
        constantKey("type", &first)
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

    /// Writes `"key":` for a key known to need no escaping, after a comma
    /// unless it is the object's first member.
    mutating func constantKey(_ key: StaticString, _ first: inout Bool) {
        append(first ? "\"" : ",\"")
        first = false
        append(key)
        append("\":")
    }

    /// Writes `"key":`, after a comma unless it is the object's first member.
    mutating func key(_ key: String, _ first: inout Bool) {
        if !first { append(UInt8(ascii: ",")) }
        first = false
        writeString(key)
        append(UInt8(ascii: ":"))
    }
}
