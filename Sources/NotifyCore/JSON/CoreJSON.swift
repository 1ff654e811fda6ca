/// The one JSON reader and writer of the core.
///
/// Every value the core emits (commands, fanout records, decisions) is written
/// by ``CoreJSON/encode(_:)`` with object keys in sorted order, so the same
/// inputs always give byte-identical records (rule 15). Every event the core
/// consumes is read by ``CoreJSON/parse(_:)``. Both are hand-written because
/// the builder must sustain well over 100,000 notifications a second.
public enum CoreJSON {
    /// The bytes of `value`, object keys sorted, no insignificant whitespace.
    public static func encode(_ value: JSONValue) -> [UInt8] {
        var writer = JSONWriter()
        writer.write(value)
        return writer.bytes
    }

    /// The bytes of anything that has a JSON form in the core.
    public static func encode(_ value: some JSONRepresentable) -> [UInt8] {
        encode(value.jsonValue)
    }

    /// The UTF-8 length of `string` once escaped and quoted as a JSON string.
    public static func encodedLength(of string: String) -> Int {
        // Read in place: a native string's bytes are contiguous, and copying it to call `withUTF8`
        // would retain and release it (the payload budget measures some twenty texts per message).
        if let length = string.utf8.withContiguousStorageIfAvailable(encodedLength(utf8:)) { return length }
        var string = string
        return string.withUTF8(encodedLength(utf8:))
    }

    private static func encodedLength(utf8: UnsafeBufferPointer<UInt8>) -> Int {
        var length = 2 + utf8.count
        // Eight bytes at a time; only a word with a byte to escape is looked at byte by byte.
        var start = 0
        while start < utf8.count {
            let end = min(start + 8, utf8.count)
            if end - start < 8 || JSONWriter.wordNeedsEscape(utf8, at: start) {
                for byte in utf8[start..<end] where JSONWriter.needsEscape(byte) {
                    length += JSONWriter.escapedLength(byte) - 1
                }
            }
            start = end
        }
        return length
    }

    /// The number of bytes ``encode(_:)`` would write for `value`, without writing them.
    public static func encodedLength(_ value: JSONValue) -> Int {
        switch value {
        case .null: return 4
        case .bool(let flag): return flag ? 4 : 5
        case .int(let number): return JSONWriter.decimalLength(number)
        case .double: return encode(value).count
        case .string(let string): return encodedLength(of: string)
        case .array(let elements):
            return elements.reduce(1 + max(elements.count, 1)) { $0 + encodedLength($1) }
        case .object(let members):
            return members.reduce(1 + max(members.count, 1)) {
                $0 + encodedLength(of: $1.key) + 1 + encodedLength($1.value)
            }
        }
    }

    /// Parses one JSON document. Throws ``JSONSyntaxError`` with the byte
    /// offset of the first problem.
    public static func parse(_ bytes: some Collection<UInt8>) throws(JSONSyntaxError) -> JSONValue {
        let array = bytes as? [UInt8] ?? Array(bytes)
        return try array.withUnsafeBufferPointer { buffer throws(JSONSyntaxError) in
            var parser = JSONParser(buffer)
            return try parser.parseDocument()
        }
    }

    /// Parses one document, keeping a top-level object's members as a list (see ``ParsedDocument``).
    static func parseMembers(_ bytes: some Collection<UInt8>) throws(JSONSyntaxError) -> ParsedDocument {
        let array = bytes as? [UInt8] ?? Array(bytes)
        return try array.withUnsafeBufferPointer { buffer throws(JSONSyntaxError) in
            var parser = JSONParser(buffer)
            return try parser.parseDocumentMembers()
        }
    }

    /// Parses one JSON document given as text.
    public static func parse(_ text: String) throws(JSONSyntaxError) -> JSONValue {
        try parse(Array(text.utf8))
    }
}
