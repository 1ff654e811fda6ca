/// The changelog form of stage 2's per-user state: the `Codable` form, written by ``CoreJSON``
/// because it is written once per touched user and batch (restore reads it with `Codable`).
extension UserEntry: JSONRepresentable {
    public var jsonValue: JSONValue {
        var object = JSONObjectBuilder(capacity: 10)
        object["devices"] = .array(devices.map(\.jsonValue))
        object["preferences"] = preferences?.jsonValue
        object["clientStates"] = .object(clientStates.mapValues(\.jsonValue))
        object["unread"] = .object(unread.mapValues { .int(Int64($0)) })
        object["invalidTokens"] = .array(invalidTokens.map(JSONValue.string))
        object["lastBackgroundPush"] = .object(lastBackgroundPush.mapValues { .string($0.rfc3339) })
        object["pendingBadges"] = .object(pendingBadges.mapValues(\.jsonValue))
        object["recentLocal"] = .array(recentLocal.map(\.jsonValue))
        object["latestMessages"] = .object(latestMessages.mapValues(\.jsonValue))
        if !readUpTo.isEmpty { object["readUpTo"] = .object(readUpTo.mapValues { .string($0.rfc3339) }) }
        if !lateMessages.isEmpty {
            object["lateMessages"] = .object(lateMessages.mapValues { .object($0.mapValues { .string($0.rfc3339) }) })
        }
        return object.value
    }
}

extension CoreJSON {
    /// The bytes of a user entry: the same as `encode(entry.jsonValue)`, written straight from the
    /// struct (keys in sorted order by construction), since every save writes one per changed user.
    public static func encode(_ entry: UserEntry) -> [UInt8] {
        var writer = JSONWriter(capacity: 1024)
        entry.write(to: &writer)
        return writer.bytes
    }

    /// The bytes of a conversation entry: the same as `encode(entry.jsonValue)`, written straight
    /// from the struct, since every save writes one per changed conversation.
    public static func encode(_ entry: ConversationEntry) -> [UInt8] {
        var writer = JSONWriter(capacity: 512)
        writer.writeObject { writer, first in
            if let conversation = entry.conversation {
                writer.constantKey("conversation", &first)
                conversation.write(to: &writer)
            }
            writer.constantKey("held", &first)
            writer.writeArray(entry.held) { $0.write($1.jsonValue) }
            if let latestAt = entry.latestAt { writer.member("latestAt", latestAt.rfc3339, &first) }
        }
        return writer.bytes
    }
}

extension UserEntry {
    /// Writes the bytes of ``jsonValue``, members in sorted order.
    func write(to writer: inout JSONWriter) {
        writer.writeObject { writer, first in
            writer.constantKey("clientStates", &first)
            writer.writeObject(sortingKeysOf: clientStates) { $0.write($1.jsonValue) }
            writer.constantKey("devices", &first)
            writer.writeArray(devices) { $1.write(to: &$0) }
            writer.constantKey("invalidTokens", &first)
            writer.writeArray(invalidTokens) { $0.writeString($1) }
            writer.constantKey("lastBackgroundPush", &first)
            writer.writeObject(sortingKeysOf: lastBackgroundPush) { $0.writeString($1.rfc3339) }
            if !lateMessages.isEmpty {
                writer.constantKey("lateMessages", &first)
                writer.writeObject(sortingKeysOf: lateMessages) { writer, messages in
                    writer.writeObject(sortingKeysOf: messages) { $0.writeString($1.rfc3339) }
                }
            }
            writer.constantKey("latestMessages", &first)
            writer.writeObject(sortingKeysOf: latestMessages) { $1.write(to: &$0) }
            writer.constantKey("pendingBadges", &first)
            writer.writeObject(sortingKeysOf: pendingBadges) { $1.write(to: &$0) }
            if let preferences {
                writer.constantKey("preferences", &first)
                writer.write(preferences.jsonValue)
            }
            if !readUpTo.isEmpty {
                writer.constantKey("readUpTo", &first)
                writer.writeObject(sortingKeysOf: readUpTo) { $0.writeString($1.rfc3339) }
            }
            writer.constantKey("recentLocal", &first)
            writer.writeArray(recentLocal) { $1.write(to: &$0) }
            writer.constantKey("unread", &first)
            writer.writeObject(sortingKeysOf: unread) { $0.writeInteger(Int64($1)) }
        }
    }
}

extension UserEntry.LatestMessage {
    /// Writes the bytes of ``jsonValue``.
    func write(to writer: inout JSONWriter) {
        writer.writeObject { writer, first in
            writer.member("at", at.rfc3339, &first)
            writer.constantKey("messageIds", &first)
            writer.writeArray(messageIds) { $0.writeString($1) }
        }
    }
}

extension UserEntry.PendingBadge {
    /// Writes the bytes of ``jsonValue``.
    func write(to writer: inout JSONWriter) {
        writer.writeObject { writer, first in
            writer.member("at", at.rfc3339, &first)
            writer.constantKey("clearThreadIds", &first)
            writer.writeArray(clearThreadIds) { $0.writeString($1) }
            writer.member("eventId", eventId, &first)
        }
    }
}

extension UserEntry.RecentLocal {
    /// Writes the bytes of ``jsonValue``.
    func write(to writer: inout JSONWriter) {
        writer.writeObject { writer, first in
            writer.member("commandId", commandId, &first)
            writer.constantKey("record", &first)
            record.write(to: &writer)
        }
    }
}

extension Device {
    /// Writes the bytes of ``jsonValue``.
    func write(to writer: inout JSONWriter) {
        writer.writeObject { writer, first in
            writer.member("appId", appId, &first)
            writer.member("deviceId", deviceId, &first)
            writer.member("locale", locale, &first)
            writer.member("platform", platform.rawValue, &first)
            writer.member("provider", provider.rawValue, &first)
            writer.member("token", token, &first)
        }
    }
}

extension ConversationUpdated {
    /// Writes the bytes of ``jsonValue``.
    func write(to writer: inout JSONWriter) {
        writer.writeObject { writer, first in
            writer.member("at", at.rfc3339, &first)
            writer.member("conversationId", conversationId, &first)
            writer.member("id", id, &first)
            writer.member("imageURL", imageURL, &first)
            writer.member("kind", kind.rawValue, &first)
            writer.constantKey("members", &first)
            writer.writeArray(members) { $0.writeString($1) }
            writer.member("name", name, &first)
            writer.member("type", Self.eventType, &first)
        }
    }
}

extension JSONWriter {
    /// Writes an array, each element by `write`.
    mutating func writeArray<Element>(_ elements: [Element], _ write: (inout JSONWriter, Element) -> Void) {
        append(UInt8(ascii: "["))
        for (index, element) in elements.enumerated() {
            if index > 0 { append(UInt8(ascii: ",")) }
            write(&self, element)
        }
        append(UInt8(ascii: "]"))
    }

    /// Writes an object whose keys are data (ids), in sorted order, each value by `write`.
    mutating func writeObject<Value>(
        sortingKeysOf members: [String: Value], _ write: (inout JSONWriter, Value) -> Void
    ) {
        writeObject { writer, first in
            for (key, value) in members.sorted(by: { $0.key < $1.key }) {
                writer.key(key, &first)
                write(&writer, value)
            }
        }
    }
}

extension UserEntry.PendingBadge: JSONRepresentable {
    public var jsonValue: JSONValue {
        .object([
            "eventId": .string(eventId), "at": .string(at.rfc3339),
            "clearThreadIds": .array(clearThreadIds.map(JSONValue.string)),
        ])
    }
}

extension UserEntry.LatestMessage: JSONRepresentable {
    public var jsonValue: JSONValue {
        .object(["at": .string(at.rfc3339), "messageIds": .array(messageIds.map(JSONValue.string))])
    }
}

extension UserEntry.RecentLocal: JSONRepresentable {
    public var jsonValue: JSONValue {
        .object(["commandId": .string(commandId), "record": record.jsonValue])
    }
}

extension UserEntry {
    /// Reads the changelog form (what ``jsonValue`` writes) with the core's own parser: a task
    /// restores every entry of its partition this way before it processes a record.
    init(changelog bytes: [UInt8]) throws {
        let fields = try FieldReader(CoreJSON.parse(bytes))
        self.init()
        devices = try fields.array("devices").map { (element) throws(FieldError) in
            try Device(reading: FieldReader(element.value, path: element.path))
        }
        preferences = try fields.optionalValue("preferences").map { (json) throws(FieldError) in
            try PreferencesUpdated(json: json)
        }
        clientStates = try fields.members("clientStates").mapValues { (json) throws(FieldError) in
            try ClientStateChanged(json: json)
        }
        unread = try fields.members("unread").mapValues { (json) throws(FieldError) in
            guard let count = json.intValue else { throw fields.error("unread", "expected integers") }
            return Int(count)
        }
        invalidTokens = try fields.array("invalidTokens").map { (element) throws(FieldError) in
            guard let token = element.value.stringValue else {
                throw FieldError(field: element.path, problem: "expected a string")
            }
            return token
        }
        lastBackgroundPush = try fields.times("lastBackgroundPush")
        // Absent in entries written before it existed.
        if fields.optionalValue("readUpTo") != nil { readUpTo = try fields.times("readUpTo") }
        pendingBadges = try fields.members("pendingBadges").mapValues { (json) throws(FieldError) in
            let badge = try FieldReader(json, path: "pendingBadges")
            return PendingBadge(
                eventId: try badge.string("eventId"), at: try badge.time("at"),
                clearThreadIds: try badge.stringSet("clearThreadIds", minimumCount: 0))
        }
        recentLocal = try fields.array("recentLocal").map { (element) throws(FieldError) in
            let local = try FieldReader(element.value, path: element.path)
            return RecentLocal(
                commandId: try local.string("commandId"), record: try FanoutRecord(reading: local.object("record")))
        }
        // Absent in entries written before late messages were told apart, and while there are none.
        if fields.optionalValue("lateMessages") != nil {
            let late = try FieldReader(fields.value("lateMessages"), path: "lateMessages")
            for conversation in late.keys { lateMessages[conversation] = try late.times(conversation) }
        }
        // Absent from records written before copies of fanout records were recognised.
        if fields.optionalValue("latestMessages") != nil {
            latestMessages = try fields.members("latestMessages").mapValues { (json) throws(FieldError) in
                let latest = try FieldReader(json, path: "latestMessages")
                return LatestMessage(
                    at: try latest.time("at"), messageIds: try latest.stringSet("messageIds", minimumCount: 1))
            }
        }
    }
}

extension ConversationEntry {
    /// Reads the changelog form (what ``jsonValue`` writes) with the core's own parser.
    init(changelog bytes: [UInt8]) throws {
        let fields = try FieldReader(CoreJSON.parse(bytes))
        self.init(
            conversation: try fields.optionalValue("conversation").map { (json) throws(FieldError) in
                try ConversationUpdated(json: json)
            },
            held: try fields.array("held").map { (element) throws(FieldError) in
                try MessageReceived(json: element.value)
            },
            // Absent in entries written before late messages were told apart.
            latestAt: fields.optionalValue("latestAt") == nil ? nil : try fields.time("latestAt"))
    }
}

extension FieldReader {
    /// The members of an object whose keys are data (ids), not field names.
    func members(_ key: String) throws(FieldError) -> [String: JSONValue] {
        let value = try value(key)
        guard case .object(let members) = value else { throw error(key, "expected an object, got \(value.kindName)") }
        return members
    }

    /// An object of RFC 3339 times whose keys are data (ids).
    func times(_ key: String) throws(FieldError) -> [String: EventTime] {
        var times: [String: EventTime] = [:]
        for (member, json) in try members(key) {
            guard let time = json.stringValue.flatMap(EventTime.init(rfc3339:)) else {
                throw error(key, "expected RFC 3339 times")
            }
            times[member] = time
        }
        return times
    }
}
