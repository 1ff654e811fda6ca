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
        var string = string
        return string.withUTF8 { utf8 in
            var length = 2 + utf8.count
            for byte in utf8 where byte < 0x20 || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") {
                length += JSONWriter.escapedLength(byte) - 1
            }
            return length
        }
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
            return members.reduce(1 + max(members.count, 1)) { $0 + encodedLength(of: $1.key) + 1 + encodedLength($1.value) }
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

/// A parsed document: the members of a top-level object in document order, or any other value.
enum ParsedDocument {
    case object(JSONMembers)
    case value(JSONValue)
}

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

/// A type with one canonical JSON form, written by ``CoreJSON``.
public protocol JSONRepresentable {
    /// The JSON form of this value.
    var jsonValue: JSONValue { get }
}

/// Malformed JSON: what was wrong and at which byte offset.
public struct JSONSyntaxError: Error, Sendable, Hashable, CustomStringConvertible {
    public var offset: Int
    public var problem: String

    public var description: String { "invalid JSON at byte \(offset): \(problem)" }
}

/// Writes JSON into a growing buffer of its own: no copy-on-write checks per byte.
struct JSONWriter: ~Copyable {
    private var storage: UnsafeMutablePointer<UInt8>
    private(set) var count = 0
    private var capacity: Int
    /// The buffer `storage` points into when it is the writer's own: it is
    /// handed over as it is by ``finish()``. `nil` while writing into someone
    /// else's buffer (see ``init(borrowing:)``).
    private var owned: WrittenJSON.Storage?

    /// Whether `storage` is someone else's buffer.
    var isBorrowing: Bool { owned == nil }

    /// A writer whose buffer first holds `capacity` bytes (it grows as needed).
    init(capacity: Int = 2048) {
        // The capacity asked for, not the buffer's `capacity`, which would ask the allocator.
        self.capacity = max(capacity, 16)
        let buffer = WrittenJSON.allocate(capacity: self.capacity)
        owned = buffer
        storage = buffer.withUnsafeMutablePointerToElements { $0 }
    }

    /// A writer that writes into `buffer` until it is full, then carries on in
    /// a buffer of its own (``isBorrowing`` becomes `false`).
    init(borrowing buffer: UnsafeMutableBufferPointer<UInt8>) {
        let own = buffer.isEmpty ? WrittenJSON.allocate(capacity: 16) : nil
        owned = own
        storage = own?.withUnsafeMutablePointerToElements { $0 } ?? buffer.baseAddress!
        capacity = own == nil ? buffer.count : 16
    }

    /// What has been written.
    var bytes: [UInt8] {
        Array(UnsafeBufferPointer(start: storage, count: count))
    }

    /// Hands what has been written over, without copying it unless the buffer is borrowed.
    consuming func finish() -> WrittenJSON {
        guard let owned else { return WrittenJSON(copying: UnsafeBufferPointer(start: storage, count: count)) }
        owned.withUnsafeMutablePointerToHeader { $0.pointee = count }
        return WrittenJSON(owned)
    }

    /// Writes canonical JSON already written (`range`) again as a JSON string:
    /// JSON text carried inside a string. Canonical JSON has no raw control
    /// characters (its strings escape them), so only `"` and `\` are escaped.
    mutating func writeString(ofWritten range: Range<Int>) {
        // Room for the worst case (every byte escaped) first, so the source stays where it is.
        reserve(range.count * 2 + 2)
        // The position in a local: kept in the writer, it would be stored and read back for every byte.
        let storage = storage
        var position = count
        storage[position] = UInt8(ascii: "\"")
        position += 1
        for index in range {
            let byte = storage[index]
            if byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") {
                storage[position] = UInt8(ascii: "\\")
                position += 1
            }
            storage[position] = byte
            position += 1
        }
        storage[position] = UInt8(ascii: "\"")
        count = position + 1
    }

    /// Makes room for `additional` more bytes: an inlined test, the rare growth out of line.
    @inline(__always)
    private mutating func reserve(_ additional: Int) {
        if count + additional > capacity { grow(toHold: additional) }
    }

    @inline(never)
    private mutating func grow(toHold additional: Int) {
        let newCapacity = max(capacity * 2, count + additional)
        let buffer = WrittenJSON.allocate(capacity: newCapacity)
        let newStorage = buffer.withUnsafeMutablePointerToElements { $0 }
        newStorage.initialize(from: storage, count: count)
        // The old buffer, if it was ours, goes with the reference to it.
        owned = buffer
        storage = newStorage
        capacity = newCapacity
    }

    @inline(__always)
    mutating func append(_ byte: UInt8) {
        reserve(1)
        storage[count] = byte
        count += 1
    }

    @inline(__always)
    mutating func append(_ buffer: UnsafeBufferPointer<UInt8>) {
        guard let base = buffer.baseAddress, !buffer.isEmpty else { return }
        reserve(buffer.count)
        Self.copy(UnsafeBufferPointer(start: base, count: buffer.count), to: storage + count)
        count += buffer.count
    }

    /// The positions of what `write` writes.
    mutating func writtenRange(_ write: (inout JSONWriter) -> Void) -> Range<Int> {
        let start = count
        write(&self)
        return start..<count
    }

    @inline(__always)
    mutating func append(_ text: StaticString) {
        append(UnsafeBufferPointer(start: text.utf8Start, count: text.utf8CodeUnitCount))
    }

    /// Writes `"key":` for a key known to need no escaping, after a comma
    /// unless it is the object's first member: one room check for all of it.
    @inline(__always)
    mutating func constantKey(_ key: StaticString, _ first: inout Bool) {
        let length = key.utf8CodeUnitCount
        reserve(length + 4)
        if !first {
            storage[count] = UInt8(ascii: ",")
            count += 1
        }
        first = false
        storage[count] = UInt8(ascii: "\"")
        Self.copy(UnsafeBufferPointer(start: key.utf8Start, count: length), to: storage + count + 1)
        storage[count + 1 + length] = UInt8(ascii: "\"")
        storage[count + 2 + length] = UInt8(ascii: ":")
        count += length + 3
    }

    mutating func write(_ value: JSONValue) {
        switch value {
        case .null: append("null")
        case .bool(let flag): append(flag ? "true" : "false")
        case .int(let number): writeInteger(number)
        case .double(let number): writeDouble(number)
        case .string(let string): writeString(string)
        case .array(let elements):
            append(UInt8(ascii: "["))
            for (index, element) in elements.enumerated() {
                if index > 0 { append(UInt8(ascii: ",")) }
                write(element)
            }
            append(UInt8(ascii: "]"))
        case .object(let members):
            append(UInt8(ascii: "{"))
            var first = true
            if members.count == 1, let (name, member) = members.first {
                key(name, &first)
                write(member)
            } else {
                // Sort the members' positions (plain values, on the stack), not copies of the members.
                withUnsafeTemporaryAllocation(of: Dictionary<String, JSONValue>.Index.self, capacity: members.count) { buffer in
                    var order = buffer
                    _ = order.initialize(fromContentsOf: members.indices)
                    order.sort { members.keys[$0] < members.keys[$1] }
                    for index in order {
                        key(members.keys[index], &first)
                        write(members.values[index])
                    }
                }
            }
            append(UInt8(ascii: "}"))
        }
    }

    mutating func writeInteger(_ number: Int64) {
        if number == 0 {
            append(UInt8(ascii: "0"))
            return
        }
        var magnitude = number.magnitude
        if number < 0 { append(UInt8(ascii: "-")) }
        var digits: (UInt64, UInt64, UInt64) = (0, 0, 0)
        withUnsafeMutableBytes(of: &digits) { buffer in
            var start = buffer.count
            while magnitude > 0 {
                start -= 1
                buffer[start] = UInt8(ascii: "0") + UInt8(magnitude % 10)
                magnitude /= 10
            }
            append(UnsafeBufferPointer(rebasing: buffer.bindMemory(to: UInt8.self)[start...]))
        }
    }

    private mutating func writeDouble(_ number: Double) {
        guard number.isFinite else {
            append("null")
            return
        }
        if number == number.rounded(), abs(number) < 1e15 {
            writeInteger(Int64(number))
        } else {
            var text = number.description
            text.withUTF8 { append($0) }
        }
    }

    /// The number of bytes `writeInteger` writes for `number`.
    static func decimalLength(_ number: Int64) -> Int {
        var length = number < 0 ? 2 : 1
        var magnitude = number.magnitude / 10
        while magnitude > 0 {
            length += 1
            magnitude /= 10
        }
        return length
    }

    static func escapedLength(_ byte: UInt8) -> Int {
        switch byte {
        case UInt8(ascii: "\""), UInt8(ascii: "\\"), 0x08, 0x0C, 0x0A, 0x0D, 0x09: 2
        case 0..<0x20: 6
        default: 1
        }
    }

    private static let hexDigits: StaticString = "0123456789abcdef"

    /// Whether a byte must be escaped in a JSON string: below 0x20, `"` or `\\`.
    @inline(__always)
    static func needsEscape(_ byte: UInt8) -> Bool {
        byte < 0x20 || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\")
    }

    /// Whether any of the 8 bytes from `index` must be escaped, a word at a time.
    @inline(__always)
    static func wordNeedsEscape(_ utf8: UnsafeBufferPointer<UInt8>, at index: Int) -> Bool {
        wordNeedsEscape(UnsafeRawPointer(utf8.baseAddress! + index).loadUnaligned(as: UInt64.self))
    }

    /// Whether any of the 8 bytes of `word` must be escaped: the classic "has a zero byte"
    /// tests, for below 0x20, `"` and `\\`.
    @inline(__always)
    static func wordNeedsEscape(_ word: UInt64) -> Bool {
        let ones: UInt64 = 0x0101_0101_0101_0101
        let highs: UInt64 = 0x8080_8080_8080_8080
        let control = (word &- ones &* 0x20) & ~word & highs
        let quote = ((word ^ (ones &* 0x22)) &- ones) & ~(word ^ (ones &* 0x22)) & highs
        let backslash = ((word ^ (ones &* 0x5C)) &- ones) & ~(word ^ (ones &* 0x5C)) & highs
        return control | quote | backslash != 0
    }

    mutating func writeString(_ string: String) {
        // Native strings lend their bytes without a copy of the string; others are made native first.
        if string.utf8.withContiguousStorageIfAvailable({ writeString(utf8: $0) }) == nil {
            var string = string
            string.withUTF8 { writeString(utf8: $0) }
        }
    }

    /// Writes the text of a JSON string, escaped, without its quotes: several
    /// calls between two quotes write one string of the texts joined.
    mutating func writeStringContents(_ string: String) {
        var string = string
        string.withUTF8 { writeEscaped($0) }
    }

    /// Writes `text` (not from this writer) as a JSON string.
    @inline(__always)
    mutating func writeString(utf8 text: UnsafeBufferPointer<UInt8>) {
        // Quotes and the whole text in at most one growth; escapes grow as they go.
        reserve(text.count + 2)
        guard Self.needsEscape(text) else {
            // Most strings (ids, names, times, most text): quotes and the bytes, the position in a register.
            let start = storage + count
            start[0] = UInt8(ascii: "\"")
            Self.copy(text, to: start + 1)
            start[text.count + 1] = UInt8(ascii: "\"")
            count += text.count + 2
            return
        }
        storage[count] = UInt8(ascii: "\"")
        count += 1
        writeEscaped(text)
        append(UInt8(ascii: "\""))
    }

    /// Whether any byte of `utf8` must be escaped, a word at a time: the last
    /// word overlaps the one before it, and text shorter than a word is padded
    /// with a letter.
    @inline(__always)
    static func needsEscape(_ utf8: UnsafeBufferPointer<UInt8>) -> Bool {
        let count = utf8.count
        guard count >= 8 else {
            guard let base = utf8.baseAddress else { return false }
            // Gathered in a register: through memory, the word would wait for the bytes' stores.
            var word: UInt64 = 0x4141_4141_4141_4141
            for index in 0..<count {
                let shift = UInt64(8 * index)
                word = word & ~(0xFF << shift) | UInt64(base[index]) << shift
            }
            return wordNeedsEscape(word)
        }
        var index = 0
        while index + 8 <= count {
            if wordNeedsEscape(utf8, at: index) { return true }
            index += 8
        }
        return index < count && wordNeedsEscape(utf8, at: count - 8)
    }

    /// Copies `bytes` to `destination`: short runs (most are) byte by byte, cheaper than a call to memmove.
    @inline(__always)
    static func copy(_ bytes: UnsafeBufferPointer<UInt8>, to destination: UnsafeMutablePointer<UInt8>) {
        guard let base = bytes.baseAddress else { return }
        if bytes.count > 16 { return destination.update(from: base, count: bytes.count) }
        for index in 0..<bytes.count { destination[index] = base[index] }
    }

    /// Writes UTF-8 text escaped for a JSON string, a word at a time where nothing needs escaping.
    @inline(__always)
    private mutating func writeEscaped(_ utf8: UnsafeBufferPointer<UInt8>) {
        var runStart = 0
        var index = 0
        while index < utf8.count {
            if index + 8 <= utf8.count, !Self.wordNeedsEscape(utf8, at: index) {
                index += 8
                continue
            }
            let byte = utf8[index]
            index += 1
            guard Self.needsEscape(byte) else { continue }
            append(UnsafeBufferPointer(rebasing: utf8[runStart..<index - 1]))
            runStart = index
            appendEscape(byte)
        }
        appendRun(UnsafeBufferPointer(rebasing: utf8[runStart...]))
    }

    /// Appends a run of text.
    @inline(__always)
    private mutating func appendRun(_ run: UnsafeBufferPointer<UInt8>) {
        reserve(run.count)
        Self.copy(run, to: storage + count)
        count += run.count
    }

    private mutating func appendEscape(_ byte: UInt8) {
        append(UInt8(ascii: "\\"))
        switch byte {
        case UInt8(ascii: "\""): append(UInt8(ascii: "\""))
        case UInt8(ascii: "\\"): append(UInt8(ascii: "\\"))
        case 0x08: append(UInt8(ascii: "b"))
        case 0x0C: append(UInt8(ascii: "f"))
        case 0x0A: append(UInt8(ascii: "n"))
        case 0x0D: append(UInt8(ascii: "r"))
        case 0x09: append(UInt8(ascii: "t"))
        default:
            append("u00")
            append(Self.hexDigits.utf8Start[Int(byte >> 4)])
            append(Self.hexDigits.utf8Start[Int(byte & 0xF)])
        }
    }
}

struct JSONParser {
    private let input: UnsafeBufferPointer<UInt8>
    private var position = 0
    private var depth = 0
    private static let maximumDepth = 64

    init(_ input: UnsafeBufferPointer<UInt8>) {
        self.input = input
    }

    mutating func parseDocument() throws(JSONSyntaxError) -> JSONValue {
        skipWhitespace()
        let value = try parseValue()
        skipWhitespace()
        guard position == input.count else { throw fail("unexpected data after the value") }
        return value
    }

    private func fail(_ problem: String) -> JSONSyntaxError {
        JSONSyntaxError(offset: position, problem: problem)
    }

    private mutating func skipWhitespace() {
        while position < input.count {
            switch input[position] {
            case 0x20, 0x0A, 0x0D, 0x09: position += 1
            default: return
            }
        }
    }

    private mutating func parseValue() throws(JSONSyntaxError) -> JSONValue {
        guard position < input.count else { throw fail("unexpected end of input") }
        switch input[position] {
        case UInt8(ascii: "{"): return try parseObject()
        case UInt8(ascii: "["): return try parseArray()
        case UInt8(ascii: "\""): return .string(try parseString())
        case UInt8(ascii: "t"): try expectLiteral("true"); return .bool(true)
        case UInt8(ascii: "f"): try expectLiteral("false"); return .bool(false)
        case UInt8(ascii: "n"): try expectLiteral("null"); return .null
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return try parseNumber()
        default: throw fail("unexpected character")
        }
    }

    private mutating func expectLiteral(_ literal: StaticString) throws(JSONSyntaxError) {
        let count = literal.utf8CodeUnitCount
        guard position + count <= input.count else { throw fail("unexpected end of input") }
        let expected = UnsafeBufferPointer(start: literal.utf8Start, count: count)
        for index in 0..<count where input[position + index] != expected[index] {
            throw fail("invalid literal")
        }
        position += count
    }

    private mutating func enter() throws(JSONSyntaxError) {
        depth += 1
        guard depth <= Self.maximumDepth else { throw fail("nested deeper than \(Self.maximumDepth) levels") }
    }

    private mutating func parseObject() throws(JSONSyntaxError) -> JSONValue {
        // Room for the members of a typical nested object (a content, a sender) at once, not grown by rehashing.
        var members = [String: JSONValue](minimumCapacity: 8)
        try parseMembers { key, value in members.updateValue(value, forKey: key) == nil }
        return .object(members)
    }

    /// Parses one document; a top-level object comes back as its members in
    /// document order, without building a dictionary (events are read by a scan of their few members).
    mutating func parseDocumentMembers() throws(JSONSyntaxError) -> ParsedDocument {
        skipWhitespace()
        guard position < input.count, input[position] == UInt8(ascii: "{") else { return .value(try parseDocument()) }
        var members = JSONMembers(capacity: 12)
        var seen: Set<String> = []
        try parseMembers { key, value in
            // A scan (of signatures) finds duplicates among a few members; a large object switches to a set.
            let signature = JSONMembers.signature(of: key)
            let isNew = members.count < 32 ? members.index(of: key, signature: signature) == nil : seen.insert(key).inserted
            guard isNew else { return false }
            members.append(key, signature: signature, value)
            if members.count == 32 { seen = Set(members.elements.map(\.key)) }
            return true
        }
        skipWhitespace()
        guard position == input.count else { throw fail("unexpected data after the value") }
        return .object(members)
    }

    /// Parses an object from its `{`, handing each member to `add` as it is read;
    /// `add` returns `false` for a name the object already has.
    private mutating func parseMembers(_ add: (String, JSONValue) -> Bool) throws(JSONSyntaxError) {
        try enter()
        defer { depth -= 1 }
        position += 1
        skipWhitespace()
        if position < input.count, input[position] == UInt8(ascii: "}") {
            position += 1
            return
        }
        while true {
            skipWhitespace()
            guard position < input.count, input[position] == UInt8(ascii: "\"") else { throw fail("expected a member name") }
            let key = try parseString()
            skipWhitespace()
            guard position < input.count, input[position] == UInt8(ascii: ":") else { throw fail("expected ':'") }
            position += 1
            skipWhitespace()
            guard add(key, try parseValue()) else { throw fail("duplicate member \"\(key)\"") }
            skipWhitespace()
            guard position < input.count else { throw fail("unexpected end of input in an object") }
            if input[position] == UInt8(ascii: ",") {
                position += 1
            } else if input[position] == UInt8(ascii: "}") {
                position += 1
                return
            } else {
                throw fail("expected ',' or '}'")
            }
        }
    }

    private mutating func parseArray() throws(JSONSyntaxError) -> JSONValue {
        try enter()
        defer { depth -= 1 }
        position += 1
        var elements: [JSONValue] = []
        skipWhitespace()
        if position < input.count, input[position] == UInt8(ascii: "]") {
            position += 1
            return .array(elements)
        }
        while true {
            skipWhitespace()
            elements.append(try parseValue())
            skipWhitespace()
            guard position < input.count else { throw fail("unexpected end of input in an array") }
            if input[position] == UInt8(ascii: ",") {
                position += 1
            } else if input[position] == UInt8(ascii: "]") {
                position += 1
                return .array(elements)
            } else {
                throw fail("expected ',' or ']'")
            }
        }
    }

    private mutating func parseString() throws(JSONSyntaxError) -> String {
        position += 1
        let start = position
        var highBits: UInt8 = 0
        // Fast path: no escapes.
        while position < input.count {
            let byte = input[position]
            if byte == UInt8(ascii: "\"") {
                let slice = UnsafeBufferPointer(rebasing: input[start..<position])
                position += 1
                // ASCII is valid UTF-8 as it is; anything else is validated.
                if highBits < 0x80 { return String(decoding: slice, as: UTF8.self) }
                guard let string = String(validating: slice, as: UTF8.self) else { throw fail("invalid UTF-8 in a string") }
                return string
            }
            highBits |= byte
            if byte == UInt8(ascii: "\\") { break }
            if byte < 0x20 { throw fail("control character in a string") }
            position += 1
        }
        var buffer = Array(UnsafeBufferPointer(rebasing: input[start..<position]))
        while position < input.count {
            let byte = input[position]
            switch byte {
            case UInt8(ascii: "\""):
                position += 1
                guard let string = String(validating: buffer, as: UTF8.self) else { throw fail("invalid UTF-8 in a string") }
                return string
            case UInt8(ascii: "\\"):
                position += 1
                guard position < input.count else { throw fail("unexpected end of input in an escape") }
                let escape = input[position]
                position += 1
                switch escape {
                case UInt8(ascii: "\""): buffer.append(UInt8(ascii: "\""))
                case UInt8(ascii: "\\"): buffer.append(UInt8(ascii: "\\"))
                case UInt8(ascii: "/"): buffer.append(UInt8(ascii: "/"))
                case UInt8(ascii: "b"): buffer.append(0x08)
                case UInt8(ascii: "f"): buffer.append(0x0C)
                case UInt8(ascii: "n"): buffer.append(0x0A)
                case UInt8(ascii: "r"): buffer.append(0x0D)
                case UInt8(ascii: "t"): buffer.append(0x09)
                case UInt8(ascii: "u"):
                    var scalar = try parseHexQuad()
                    if (0xD800..<0xDC00).contains(scalar) {
                        guard position + 1 < input.count, input[position] == UInt8(ascii: "\\"),
                              input[position + 1] == UInt8(ascii: "u") else { throw fail("unpaired surrogate") }
                        position += 2
                        let low = try parseHexQuad()
                        guard (0xDC00..<0xE000).contains(low) else { throw fail("unpaired surrogate") }
                        scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
                    } else if (0xDC00..<0xE000).contains(scalar) {
                        throw fail("unpaired surrogate")
                    }
                    guard let unicode = Unicode.Scalar(scalar) else { throw fail("invalid \\u escape") }
                    buffer.append(contentsOf: String(Character(unicode)).utf8)
                default:
                    throw fail("invalid escape")
                }
            default:
                if byte < 0x20 { throw fail("control character in a string") }
                buffer.append(byte)
                position += 1
            }
        }
        throw fail("unterminated string")
    }

    private mutating func parseHexQuad() throws(JSONSyntaxError) -> UInt32 {
        guard position + 4 <= input.count else { throw fail("unexpected end of input in \\u escape") }
        var value: UInt32 = 0
        for _ in 0..<4 {
            let byte = input[position]
            let digit: UInt32
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = UInt32(byte - UInt8(ascii: "0"))
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = UInt32(byte - UInt8(ascii: "a") + 10)
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = UInt32(byte - UInt8(ascii: "A") + 10)
            default: throw fail("invalid \\u escape")
            }
            value = value << 4 | digit
            position += 1
        }
        return value
    }

    private mutating func parseNumber() throws(JSONSyntaxError) -> JSONValue {
        let start = position
        if input[position] == UInt8(ascii: "-") { position += 1 }
        guard position < input.count, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(input[position]) else {
            throw fail("invalid number")
        }
        if input[position] == UInt8(ascii: "0") {
            position += 1
        } else {
            skipDigits()
        }
        var isInteger = true
        if position < input.count, input[position] == UInt8(ascii: ".") {
            isInteger = false
            position += 1
            guard consumeDigits() else { throw fail("invalid number: expected digits after '.'") }
        }
        if position < input.count, input[position] == UInt8(ascii: "e") || input[position] == UInt8(ascii: "E") {
            isInteger = false
            position += 1
            if position < input.count, input[position] == UInt8(ascii: "+") || input[position] == UInt8(ascii: "-") {
                position += 1
            }
            guard consumeDigits() else { throw fail("invalid number: expected exponent digits") }
        }
        let text = String(decoding: UnsafeBufferPointer(rebasing: input[start..<position]), as: UTF8.self)
        if isInteger, let integer = Int64(text) { return .int(integer) }
        guard let double = Double(text) else { throw fail("invalid number") }
        return .double(double)
    }

    private mutating func skipDigits() {
        while position < input.count, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(input[position]) {
            position += 1
        }
    }

    private mutating func consumeDigits() -> Bool {
        let start = position
        skipDigits()
        return position > start
    }
}
