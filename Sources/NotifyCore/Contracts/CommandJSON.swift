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
                "token": .string(apns.token), "headers": apns.headersJSON.value, "payload": apns.payload,
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
        // Written straight into the array, sized from the parts: the renderings, the envelope's
        // strings (as if nothing needs escaping: they are ids and times), the member names and
        // short constants at most `namesLength`.
        func quoted(_ text: String?) -> Int { text.map { $0.utf8.count + 2 } ?? 0 }
        let namesLength = 320
        let length =
            namesLength + command.contentJSON.encodedCount + (command.localJSON?.encodedCount ?? 0)
            + (command.apns.map { quoted($0.token) + $0.headersJSON.encodedCount + $0.payloadJSON.encodedCount } ?? 0)
            + (command.fcm?.messageJSON.encodedCount ?? 0)
            + quoted(command.type) + quoted(command.id) + quoted(command.at) + quoted(command.expiresAt)
            + quoted(command.recipient.userId) + quoted(command.recipient.deviceId) + quoted(command.conversationId)
            + quoted(command.messageId)
        let bytes = [UInt8](unsafeUninitializedCapacity: length) { buffer, count in
            var writer = JSONWriter(borrowing: buffer)
            writer.write(command)
            // Past the estimate (escapes) the writer carried on in a buffer of its own: start again below.
            count = writer.isBorrowing ? writer.count : 0
        }
        guard bytes.isEmpty else { return bytes }
        var writer = JSONWriter(capacity: 2 * length)
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
            write(apns.headersJSON)
            constantKey("payload", &inner)
            write(apns.payloadJSON)
            constantKey("token", &inner)
            writeString(apns.token)
            append(UInt8(ascii: "}"))
        }
        constantKey("at", &first)
        writeString(command.at)
        constantKey("content", &first)
        write(command.contentJSON)
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
            write(fcm.messageJSON)
            append(UInt8(ascii: "}"))
        }
        constantKey("id", &first)
        writeString(command.id)
        if let local = command.localJSON {
            constantKey("local", &first)
            write(local)
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

    /// Writes an object: `{`, what `members` writes (starting with `first` set), `}`.
    @inline(__always)
    mutating func writeObject(_ members: (inout JSONWriter, inout Bool) -> Void) {
        append(UInt8(ascii: "{"))
        var first = true
        members(&self, &first)
        append(UInt8(ascii: "}"))
    }

    /// Writes the member `"key":"value"`.
    mutating func member(_ key: StaticString, _ value: String, _ first: inout Bool) {
        constantKey(key, &first)
        writeString(value)
    }

    /// Writes the member `"key":"value"` when there is a value.
    mutating func member(_ key: StaticString, _ value: String?, _ first: inout Bool) {
        if let value { member(key, value, &first) }
    }

    /// Writes the member `"key":number`.
    mutating func member(_ key: StaticString, _ number: Int64, _ first: inout Bool) {
        constantKey(key, &first)
        writeInteger(number)
    }

    /// Writes the member `"key":true` or `false`.
    mutating func member(_ key: StaticString, _ flag: Bool, _ first: inout Bool) {
        constantKey(key, &first)
        append(flag ? "true" : "false")
    }

    /// Writes the member `"key":"digits"`: a number as FCM's string-only data carries it.
    mutating func member(_ key: StaticString, quoted number: Int64, _ first: inout Bool) {
        constantKey(key, &first)
        append(UInt8(ascii: "\""))
        writeInteger(number)
        append(UInt8(ascii: "\""))
    }

    /// Writes `"key":`, after a comma unless it is the object's first member.
    mutating func key(_ key: String, _ first: inout Bool) {
        if !first { append(UInt8(ascii: ",")) }
        first = false
        writeString(key)
        append(UInt8(ascii: ":"))
    }
}
