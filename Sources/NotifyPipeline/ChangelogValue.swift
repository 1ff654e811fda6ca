import NotifyCore

/// The value of a changelog record: a key's state entry, per input topic the
/// offset of the last record whose effects the entry holds, and the ids of the
/// last events applied to it.
///
/// When a task re-reads input after a restart (offsets are committed after the
/// changelog), records at or below those offsets are skipped; an event that
/// comes again at another offset (stage 1 re-emitting a fanout record after a
/// crash) is recognised by its id. Either way its effects (an unread count, a
/// held message) are never applied twice.
struct ChangelogValue: Sendable, Equatable {
    /// The stage's own encoding of the entry; nil when the key has no state.
    var entry: [UInt8]?
    /// Input topic → offset of the last record applied.
    var applied: [String: Int64]
    /// Ids of the last events applied to the key, oldest first.
    var recent: [String] = []

    /// `{"applied":{...},"entry":<entry or null>,"recent":[...]}`.
    func encoded() -> [UInt8] {
        var bytes = Array(#"{"applied":"#.utf8)
        bytes += CoreJSON.encode(JSONValue.object(applied.mapValues { .int($0) }))
        bytes += Array(#","entry":"#.utf8)
        bytes += entry ?? Array("null".utf8)
        bytes += Array(#","recent":"#.utf8)
        bytes += CoreJSON.encode(JSONValue.array(recent.map { .string($0) }))
        bytes.append(UInt8(ascii: "}"))
        return bytes
    }

    static func decode(_ bytes: [UInt8]) throws -> ChangelogValue {
        let json = try CoreJSON.parse(bytes)
        guard case .object(let members) = json, case .object(let applied)? = members["applied"] else {
            throw ChangelogError("a changelog value needs an \"applied\" object")
        }
        var offsets: [String: Int64] = [:]
        for (topic, value) in applied {
            guard let offset = value.intValue else {
                throw ChangelogError("applied offset of \(topic) is not an integer")
            }
            offsets[topic] = offset
        }
        let entry: [UInt8]? =
            switch members["entry"] {
            case nil, .null?: nil
            case let value?: CoreJSON.encode(value)
            }
        var recent: [String] = []
        if case .array(let ids)? = members["recent"] {
            recent = try ids.map { id in
                guard let text = id.stringValue else { throw ChangelogError("a recent event id is not a string") }
                return text
            }
        }
        return ChangelogValue(entry: entry, applied: offsets, recent: recent)
    }
}

/// A changelog record that cannot be read back.
struct ChangelogError: Error, CustomStringConvertible {
    let description: String

    init(_ description: String) {
        self.description = description
    }
}
