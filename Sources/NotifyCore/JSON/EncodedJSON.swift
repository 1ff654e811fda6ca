/// A JSON value that is either a ``JSONValue`` tree or its bytes as
/// ``CoreJSON/encode(_:)`` writes them, whichever it was made from; the other
/// form is produced when asked for.
///
/// The builder writes renderings straight to bytes, and the pipeline only
/// needs those bytes, so a built command carries its renderings in this form:
/// encoding the command splices them instead of walking and sorting a tree.
/// Readers that want the tree (sinks, tests) get it by ``value``.
///
/// Two values are equal when their canonical bytes are equal.
public struct EncodedJSON: Sendable, Hashable {
    fileprivate enum Form: Sendable {
        case value(JSONValue)
        /// A part of what a writer wrote (several values may share one buffer).
        case written(WrittenJSON, Range<Int>)
    }

    fileprivate let form: Form

    /// A value held as its tree (its bytes are written when asked for).
    public init(_ value: JSONValue) {
        form = .value(value)
    }

    /// Bytes that are canonical JSON (sorted keys, no whitespace), as a `JSONWriter` writes them.
    init(canonical bytes: [UInt8]) {
        let written = bytes.withUnsafeBufferPointer(WrittenJSON.init(copying:))
        form = .written(written, 0..<written.count)
    }

    /// `range` of what a writer wrote: canonical JSON by construction.
    init(_ written: WrittenJSON, _ range: Range<Int>) {
        form = .written(written, range)
    }

    /// The bytes `write` writes, which must be canonical JSON.
    init(capacity: Int = 1000, writing write: (inout JSONWriter) -> Void) {
        var writer = JSONWriter(capacity: capacity)
        write(&writer)
        let written = writer.finish()
        self.init(written, 0..<written.count)
    }

    /// The value whose bytes are `range` of these bytes (which must hold exactly one value).
    func part(_ range: Range<Int>) -> EncodedJSON {
        switch form {
        case .value: EncodedJSON(canonical: Array(bytes[range]))
        case .written(let written, let whole):
            EncodedJSON(written, whole.lowerBound + range.lowerBound..<whole.lowerBound + range.upperBound)
        }
    }

    /// The JSON tree.
    public var value: JSONValue {
        switch form {
        case .value(let value): return value
        case .written:
            do {
                return try CoreJSON.parse(bytes)
            } catch {
                preconditionFailure("canonical JSON that does not parse: \(error)")
            }
        }
    }

    /// The bytes, as ``CoreJSON/encode(_:)`` writes them.
    public var bytes: [UInt8] {
        switch form {
        case .value(let value): CoreJSON.encode(value)
        case .written(let written, let range): Array(written.buffer(range))
        }
    }

    /// Calls `body` with the bytes.
    func withBytes<Result>(_ body: (UnsafeBufferPointer<UInt8>) -> Result) -> Result {
        switch form {
        case .value(let value): CoreJSON.encode(value).withUnsafeBufferPointer(body)
        case .written(let written, let range): withExtendedLifetime(written.storage) { body(written.buffer(range)) }
        }
    }

    /// The number of bytes ``bytes`` holds, without writing them.
    var encodedCount: Int {
        switch form {
        case .value(let value): CoreJSON.encodedLength(value)
        case .written(_, let range): range.count
        }
    }

    public static func == (lhs: EncodedJSON, rhs: EncodedJSON) -> Bool {
        if case .value(let left) = lhs.form, case .value(let right) = rhs.form, left == right { return true }
        return lhs.withBytes { left in rhs.withBytes { right in left.elementsEqual(right) } }
    }

    public func hash(into hasher: inout Hasher) {
        withBytes { hasher.combine(bytes: UnsafeRawBufferPointer($0)) }
    }
}

extension EncodedJSON: Codable {
    public init(from decoder: any Decoder) throws {
        self.init(try JSONValue(from: decoder))
    }

    public func encode(to encoder: any Encoder) throws {
        try value.encode(to: encoder)
    }
}

extension JSONWriter {
    /// Writes `json`: its bytes as they are, or its tree.
    mutating func write(_ json: EncodedJSON) {
        switch json.form {
        case .value(let value): write(value)
        case .written(let written, let range): withExtendedLifetime(written.storage) { append(written.buffer(range)) }
        }
    }

    /// Writes `json`'s bytes as a JSON string: JSON carried inside a string.
    mutating func writeString(json: EncodedJSON) {
        json.withBytes { writeString(utf8: $0) }
    }

    /// Writes an array of strings.
    mutating func writeStringArray(_ strings: [String]) {
        append(UInt8(ascii: "["))
        for (index, string) in strings.enumerated() {
            if index > 0 { append(UInt8(ascii: ",")) }
            writeString(string)
        }
        append(UInt8(ascii: "]"))
    }

    /// Writes the member `"key":` followed by a value.
    mutating func member(_ key: StaticString, _ json: EncodedJSON, _ first: inout Bool) {
        constantKey(key, &first)
        write(json)
    }
}
