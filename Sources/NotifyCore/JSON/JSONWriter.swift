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
                withUnsafeTemporaryAllocation(of: Dictionary<String, JSONValue>.Index.self, capacity: members.count) {
                    buffer in
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
