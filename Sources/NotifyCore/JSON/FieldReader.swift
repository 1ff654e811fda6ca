/// Reads the members of one JSON object strictly: required fields must be
/// there with the right type, optional ones may be absent or `null`, and
/// members nobody asked for are refused by ``rejectUnknown(allowed:)``.
/// Every error names the full path of the field. Opaque outside the core.
public struct FieldReader {
    /// The members, in document order (see ``JSONMembers``).
    let members: JSONMembers
    let path: String

    init(_ value: JSONValue, path: String = "") throws(FieldError) {
        guard case .object(let members) = value else {
            throw FieldError(
                field: path.isEmpty ? "(value)" : path, problem: "expected an object, got \(value.kindName)")
        }
        self.init(members: JSONMembers(members), path: path)
    }

    /// Reads a parsed document (see ``CoreJSON/parseMembers(_:)``).
    init(_ document: ParsedDocument) throws(FieldError) {
        switch document {
        case .object(let members): self.init(members: members, path: "")
        case .value(let value): try self.init(value)
        }
    }

    private init(members: JSONMembers, path: String) {
        self.members = members
        self.path = path
    }

    /// The member names.
    var keys: [String] { members.elements.map(\.key) }

    func fieldPath(_ key: String) -> String {
        path.isEmpty ? key : path + "." + key
    }

    func error(_ key: String, _ problem: String) -> FieldError {
        FieldError(field: fieldPath(key), problem: problem)
    }

    func rejectUnknown(allowed: [String]) throws(FieldError) {
        let allKnown =
            members.count <= allowed.count
            && withUnsafeTemporaryAllocation(of: UInt64.self, capacity: allowed.count) { signatures in
                for (index, name) in allowed.enumerated() { signatures[index] = JSONMembers.signature(of: name) }
                return members.elements.allSatisfy { member in
                    signatures.indices.contains { signatures[$0] == member.signature && allowed[$0] == member.key }
                }
            }
        guard !allKnown else { return }
        for key in keys.sorted() where !allowed.contains(key) {
            throw error(key, "unknown field (allowed: \(allowed.joined(separator: ", ")))")
        }
    }

    /// The value of `key`, `nil` when absent or `null`.
    func optionalValue(_ key: String) -> JSONValue? {
        guard let index = members.index(of: key) else { return nil }
        switch members.elements[index].value {
        case .null: return nil
        case let value: return value
        }
    }

    func value(_ key: String) throws(FieldError) -> JSONValue {
        guard let value = optionalValue(key) else { throw error(key, "missing") }
        return value
    }

    func string(_ key: String, maxLength: Int? = nil) throws(FieldError) -> String {
        let value = try value(key)
        guard case .string(let string) = value else { throw error(key, "expected a string, got \(value.kindName)") }
        guard !string.isEmpty else { throw error(key, "must not be empty") }
        if let maxLength, string.unicodeScalars.count > maxLength {
            throw error(key, "longer than \(maxLength) characters")
        }
        return string
    }

    func optionalString(_ key: String, maxLength: Int? = nil) throws(FieldError) -> String? {
        guard optionalValue(key) != nil else { return nil }
        return try string(key, maxLength: maxLength)
    }

    /// A string that may be empty (message text).
    func optionalText(_ key: String) throws(FieldError) -> String? {
        guard let value = optionalValue(key) else { return nil }
        guard case .string(let string) = value else { throw error(key, "expected a string, got \(value.kindName)") }
        return string
    }

    func constant(_ key: String, _ expected: String) throws(FieldError) {
        let found = try string(key)
        guard found == expected else { throw error(key, "expected \"\(expected)\", got \"\(found)\"") }
    }

    func choice<Choice: RawRepresentable & CaseIterable>(_ key: String, _: Choice.Type = Choice.self) throws(FieldError)
        -> Choice
    where Choice.RawValue == String {
        let raw = try string(key)
        guard let choice = Choice(rawValue: raw) else {
            let allowed = Choice.allCases.map { "\"\($0.rawValue)\"" }.joined(separator: ", ")
            throw error(key, "\"\(raw)\" is not one of \(allowed)")
        }
        return choice
    }

    func optionalChoice<Choice: RawRepresentable & CaseIterable>(_ key: String, _: Choice.Type = Choice.self)
        throws(FieldError) -> Choice?
    where Choice.RawValue == String {
        guard optionalValue(key) != nil else { return nil }
        return try choice(key)
    }

    func time(_ key: String) throws(FieldError) -> EventTime {
        let text = try string(key)
        guard let time = EventTime(rfc3339: text) else {
            throw error(key, "\"\(text)\" is not an RFC 3339 date-time such as 2026-11-22T03:00:00Z")
        }
        return time
    }

    func integer(_ key: String, minimum: Int64) throws(FieldError) -> Int64 {
        let value = try value(key)
        guard case .int(let number) = value else { throw error(key, "expected an integer, got \(value.kindName)") }
        guard number >= minimum else { throw error(key, "must be at least \(minimum), got \(number)") }
        return number
    }

    func optionalInteger(_ key: String, minimum: Int64) throws(FieldError) -> Int64? {
        guard optionalValue(key) != nil else { return nil }
        return try integer(key, minimum: minimum)
    }

    func url(_ key: String) throws(FieldError) -> String {
        let text = try string(key, maxLength: Self.maximumURLLength)
        guard Self.isHTTPURL(text) else { throw error(key, "\"\(text)\" is not an http(s) URL") }
        return text
    }

    /// The most characters a URL field may have.
    static let maximumURLLength = 2048

    /// Whether `text` has the form of an http(s) URL (its length checked apart).
    static func isHTTPURL(_ text: String) -> Bool {
        (text.hasPrefix("https://") || text.hasPrefix("http://")) && text.utf8.count > 8
            && !text.utf8.contains(where: { $0 <= 0x20 })
    }

    /// Whether `text` is a valid URL field: not empty, at most ``maximumURLLength`` characters, http(s).
    static func isURLField(_ text: String) -> Bool {
        !text.isEmpty && text.unicodeScalars.count <= maximumURLLength && isHTTPURL(text)
    }

    func optionalURL(_ key: String) throws(FieldError) -> String? {
        guard optionalValue(key) != nil else { return nil }
        return try url(key)
    }

    func object(_ key: String) throws(FieldError) -> FieldReader {
        guard let reader = try optionalObject(key) else { throw error(key, "missing") }
        return reader
    }

    func optionalObject(_ key: String) throws(FieldError) -> FieldReader? {
        guard let index = members.index(of: key) else { return nil }
        let member = members.elements[index]
        if let object = member.object { return FieldReader(members: object, path: fieldPath(key)) }
        if case .null = member.value { return nil }
        return try FieldReader(member.value, path: fieldPath(key))
    }

    /// The elements of an array, each with its own path (`devices[2]`).
    func array(_ key: String) throws(FieldError) -> [(path: String, value: JSONValue)] {
        let value = try value(key)
        guard case .array(let elements) = value else { throw error(key, "expected an array, got \(value.kindName)") }
        return elements.enumerated().map { (fieldPath(key) + "[\($0.offset)]", $0.element) }
    }

    /// An array of distinct non-empty strings (user ids).
    func stringSet(_ key: String, minimumCount: Int) throws(FieldError) -> [String] {
        let elements = try array(key)
        guard elements.count >= minimumCount else { throw error(key, "needs at least \(minimumCount) element(s)") }
        var seen = Set<String>()
        var result: [String] = []
        result.reserveCapacity(elements.count)
        for element in elements {
            guard case .string(let string) = element.value, !string.isEmpty else {
                throw FieldError(
                    field: element.path, problem: "expected a non-empty string, got \(element.value.kindName)")
            }
            guard seen.insert(string).inserted else {
                throw FieldError(field: element.path, problem: "duplicate \"\(string)\"")
            }
            result.append(string)
        }
        return result
    }

    func optionalStringSet(_ key: String) throws(FieldError) -> [String]? {
        guard optionalValue(key) != nil else { return nil }
        return try stringSet(key, minimumCount: 0)
    }
}

extension JSONValue {
    /// What kind of JSON value this is, for error messages.
    var kindName: String {
        switch self {
        case .null: "null"
        case .bool: "a boolean"
        case .int: "an integer"
        case .double: "a number"
        case .string(let string): "the string \"\(string.count > 40 ? String(string.prefix(40)) + "…" : string)\""
        case .array: "an array"
        case .object: "an object"
        }
    }
}
