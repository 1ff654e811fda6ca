/// The members of a JSON object in document order. An object of an event has
/// few members, so a scan finds one faster than hashing would; each name
/// carries a signature (its length and some of its bytes), so the scan
/// compares integers and compares names only where they match.
struct JSONMembers {
    struct Member {
        /// A member's value as parsed: an object nested in a document is kept as its members, to be
        /// read by a scan like the document's, and becomes a ``JSONValue`` only if asked for one.
        enum Content {
            case value(JSONValue)
            case object(JSONMembers)
        }

        let key: String
        let content: Content
        let signature: UInt64

        init(key: String, content: Content, signature: UInt64) {
            (self.key, self.content, self.signature) = (key, content, signature)
        }

        init(key: String, value: JSONValue, signature: UInt64) {
            self.init(key: key, content: .value(value), signature: signature)
        }

        /// The value (a nested object's made into one).
        var value: JSONValue {
            switch content {
            case .value(let value): value
            case .object(let members): members.value
            }
        }

        /// The members of the nested object this member holds, if it holds one.
        var object: JSONMembers? {
            switch content {
            case .value(.object(let members)): JSONMembers(members)
            case .value: nil
            case .object(let members): members
            }
        }
    }

    private(set) var elements: [Member] = []

    init(capacity: Int) {
        elements.reserveCapacity(capacity)
    }

    /// The members of an object held as a dictionary (in its order).
    init(_ members: [String: JSONValue]) {
        elements = members.map { Member(key: $0.key, value: $0.value, signature: Self.signature(of: $0.key)) }
    }

    var count: Int { elements.count }

    /// The position of the member named `key`.
    @inline(__always)
    func index(of key: String) -> Int? {
        index(of: key, signature: Self.signature(of: key))
    }

    @inline(__always)
    func index(of key: String, signature: UInt64) -> Int? {
        for index in elements.indices where elements[index].signature == signature && elements[index].key == key {
            return index
        }
        return nil
    }

    mutating func append(_ key: String, signature: UInt64, _ content: Member.Content) {
        elements.append(Member(key: key, content: content, signature: signature))
    }

    /// The object as a ``JSONValue``.
    var value: JSONValue {
        .object(Dictionary(elements.map { ($0.key, $0.value) }, uniquingKeysWith: { first, _ in first }))
    }

    /// The length and the first four and last three bytes of a name: the same
    /// for names with the same bytes, and different for the names of one event
    /// (they differ in length or near an end); names with the same signature are compared.
    @inline(__always)
    static func signature(of key: String) -> UInt64 {
        if let signature = key.utf8.withContiguousStorageIfAvailable(signature(utf8:)) { return signature }
        var key = key
        return key.withUTF8(signature(utf8:))
    }

    @inline(__always)
    static func signature(utf8: UnsafeBufferPointer<UInt8>) -> UInt64 {
        let count = utf8.count
        guard let base = utf8.baseAddress, count > 0 else { return 0 }
        // Positions past a short name's end read its last byte again.
        func byte(_ index: Int) -> UInt64 { UInt64(base[max(0, min(index, count - 1))]) }
        return UInt64(truncatingIfNeeded: count) << 56 | byte(0) << 48 | byte(1) << 40 | byte(2) << 32 | byte(3) << 24
            | byte(count - 3) << 16 | byte(count - 2) << 8 | byte(count - 1)
    }
}
