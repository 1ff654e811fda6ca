/// The changelog form of stage 2's per-user state: the `Codable` form, written by ``CoreJSON``
/// because it is written once per touched user and batch (restore reads it with `Codable`).
extension UserEntry: JSONRepresentable {
    public var jsonValue: JSONValue {
        var object = JSONObjectBuilder(capacity: 8)
        object["devices"] = .array(devices.map(\.jsonValue))
        object["preferences"] = preferences?.jsonValue
        object["clientStates"] = .object(clientStates.mapValues(\.jsonValue))
        object["unread"] = .object(unread.mapValues { .int(Int64($0)) })
        object["invalidTokens"] = .array(invalidTokens.map(JSONValue.string))
        object["lastBackgroundPush"] = .object(lastBackgroundPush.mapValues { .string($0.rfc3339) })
        object["pendingBadges"] = .object(pendingBadges.mapValues(\.jsonValue))
        object["recentLocal"] = .array(recentLocal.map(\.jsonValue))
        return object.value
    }
}

extension UserEntry.PendingBadge: JSONRepresentable {
    public var jsonValue: JSONValue {
        .object(["eventId": .string(eventId), "at": .string(at.rfc3339), "clearThreadIds": .array(clearThreadIds.map(JSONValue.string))])
    }
}

extension UserEntry.RecentLocal: JSONRepresentable {
    public var jsonValue: JSONValue {
        .object(["commandId": .string(commandId), "record": record.jsonValue])
    }
}
