/// Builds a JSON object, leaving out members whose value is `nil`.
struct JSONObjectBuilder {
    var members: [String: JSONValue]

    init(capacity: Int = 8) {
        members = Dictionary(minimumCapacity: capacity)
    }

    subscript(key: String) -> JSONValue? {
        get { members[key] }
        set { members[key] = newValue }
    }

    mutating func set(_ key: String, _ string: String?) {
        if let string { members[key] = .string(string) }
    }

    var value: JSONValue { .object(members) }
}
