/// The members of a JSON object in document order. An object of an event has
/// few members, so a scan finds one faster than hashing would; each name
/// carries a signature (its length and some of its bytes), so the scan
/// compares integers and compares names only where they match.
struct JSONMembers {
    struct Member {
        let key: String
        let value: JSONValue
        let signature: UInt64
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

    mutating func append(_ key: String, signature: UInt64, _ value: JSONValue) {
        elements.append(Member(key: key, value: value, signature: signature))
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
