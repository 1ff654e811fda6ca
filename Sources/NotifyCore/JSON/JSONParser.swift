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
        case UInt8(ascii: "t"):
            try expectLiteral("true")
            return .bool(true)
        case UInt8(ascii: "f"):
            try expectLiteral("false")
            return .bool(false)
        case UInt8(ascii: "n"):
            try expectLiteral("null")
            return .null
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
        try parseMembers { parser throws(JSONSyntaxError) in
            try parser.parseValue()
        } add: { key, value in
            members.updateValue(value, forKey: key) == nil
        }
        return .object(members)
    }

    /// Parses one document; a top-level object comes back as its members in document order, and so
    /// do the objects nested in it, without building a dictionary (events are read by a scan of their
    /// few members).
    mutating func parseDocumentMembers() throws(JSONSyntaxError) -> ParsedDocument {
        skipWhitespace()
        guard position < input.count, input[position] == UInt8(ascii: "{") else { return .value(try parseDocument()) }
        let members = try parseObjectMembers()
        skipWhitespace()
        guard position == input.count else { throw fail("unexpected data after the value") }
        return .object(members)
    }

    /// Parses an object from its `{` into its members in document order; an object among its values
    /// becomes members too (``JSONMembers/Member/object``), other values ``JSONValue``s.
    private mutating func parseObjectMembers() throws(JSONSyntaxError) -> JSONMembers {
        var members = JSONMembers(capacity: 12)
        var seen: Set<String> = []
        try parseMembers { parser throws(JSONSyntaxError) -> JSONMembers.Member.Content in
            guard parser.position < parser.input.count, parser.input[parser.position] == UInt8(ascii: "{") else {
                return .value(try parser.parseValue())
            }
            return .object(try parser.parseObjectMembers())
        } add: { key, content in
            // A scan (of signatures) finds duplicates among a few members; a large object switches to a set.
            let signature = JSONMembers.signature(of: key)
            let isNew =
                members.count < 32 ? members.index(of: key, signature: signature) == nil : seen.insert(key).inserted
            guard isNew else { return false }
            members.append(key, signature: signature, content)
            if members.count == 32 { seen = Set(members.elements.map(\.key)) }
            return true
        }
        return members
    }

    /// Parses an object from its `{`, handing each member's name and its value, read by `parseValue`,
    /// to `add` as it is read; `add` returns `false` for a name the object already has.
    private mutating func parseMembers<Value>(
        _ parseValue: (inout JSONParser) throws(JSONSyntaxError) -> Value, add: (String, Value) -> Bool
    ) throws(JSONSyntaxError) {
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
            guard position < input.count, input[position] == UInt8(ascii: "\"") else {
                throw fail("expected a member name")
            }
            let key = try parseString()
            skipWhitespace()
            guard position < input.count, input[position] == UInt8(ascii: ":") else { throw fail("expected ':'") }
            position += 1
            skipWhitespace()
            guard add(key, try parseValue(&self)) else { throw fail("duplicate member \"\(key)\"") }
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
                guard let string = String(validating: slice, as: UTF8.self) else {
                    throw fail("invalid UTF-8 in a string")
                }
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
                guard let string = String(validating: buffer, as: UTF8.self) else {
                    throw fail("invalid UTF-8 in a string")
                }
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
                            input[position + 1] == UInt8(ascii: "u")
                        else { throw fail("unpaired surrogate") }
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

// MARK: Reading a known layout

/// Steps for a reader that knows the exact layout of what it reads (see
/// ``FanoutRecord/init(canonical:)``): each says whether the input goes on as
/// expected, and a reader that meets anything else gives up, to read the input
/// the general way.
extension JSONParser {
    /// Whether the input goes on with exactly `literal`; moves past it if so.
    @inline(__always)
    mutating func skip(_ literal: StaticString) -> Bool {
        let count = literal.utf8CodeUnitCount
        guard position + count <= input.count else { return false }
        for index in 0..<count where input[position + index] != literal.utf8Start[index] { return false }
        position += count
        return true
    }

    /// Whether the whole input has been read.
    var isAtEnd: Bool { position == input.count }

    /// The string at the position (escapes resolved, UTF-8 validated), or `nil` if none is there or it is malformed.
    mutating func readString() -> String? {
        guard position < input.count, input[position] == UInt8(ascii: "\"") else { return nil }
        return try? parseString()
    }

    /// The integer at the position, or `nil` if none is there, it has a fraction or an exponent, or
    /// it does not fit in 64 bits.
    mutating func readInteger() -> Int64? {
        guard position < input.count,
            input[position] == UInt8(ascii: "-") || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(input[position]),
            case .int(let number)? = try? parseNumber()
        else { return nil }
        return number
    }

    /// `true` or `false` at the position, or `nil`.
    mutating func readBool() -> Bool? {
        if skip("true") { return true }
        if skip("false") { return false }
        return nil
    }
}
