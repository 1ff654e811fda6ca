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
        case bytes([UInt8])
    }

    fileprivate let form: Form

    /// A value held as its tree (its bytes are written when asked for).
    public init(_ value: JSONValue) {
        form = .value(value)
    }

    /// Bytes written by a `JSONWriter`: canonical JSON (sorted keys, no whitespace) by construction.
    init(canonical bytes: [UInt8]) {
        form = .bytes(bytes)
    }

    /// The bytes `write` writes, which must be canonical JSON.
    init(writing write: (inout JSONWriter) -> Void) {
        var writer = JSONWriter(capacity: 1024)
        write(&writer)
        self.init(canonical: writer.bytes)
    }

    /// The JSON tree.
    public var value: JSONValue {
        switch form {
        case .value(let value): return value
        case .bytes(let bytes):
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
        case .bytes(let bytes): bytes
        }
    }

    /// The number of bytes ``bytes`` holds, without writing them.
    var encodedCount: Int {
        switch form {
        case .value(let value): CoreJSON.encodedLength(value)
        case .bytes(let bytes): bytes.count
        }
    }

    public static func == (lhs: EncodedJSON, rhs: EncodedJSON) -> Bool {
        if case .value(let left) = lhs.form, case .value(let right) = rhs.form, left == right { return true }
        return lhs.bytes == rhs.bytes
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(bytes)
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
        case .bytes(let bytes): append(bytes)
        }
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

    /// Appends bytes that are already JSON.
    mutating func append(_ bytes: [UInt8]) {
        bytes.withUnsafeBufferPointer { append($0) }
    }
}
