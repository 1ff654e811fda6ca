import Kafka
import Synchronization

/// A W3C trace context (`traceparent`: `00-<trace id>-<parent span id>-<flags>`), carried in the
/// Kafka headers of every record made from a message: the message event, its fanout records,
/// their commands and the sinks' outcomes. Each hop keeps the trace id and takes a new span id.
public struct TraceContext: Sendable, Hashable, CustomStringConvertible {
    /// The header that carries it.
    public static let header = "traceparent"

    /// 32 lowercase hex digits.
    public let traceId: String
    /// 16 lowercase hex digits.
    public let spanId: String
    /// `01` when sampled.
    public let flags: String

    /// The context in `headers`, if there is a well-formed one (hex digits read in either case, kept in lowercase).
    public init?(headers: [KafkaHeader]) {
        guard let value = headers.first(where: { $0.name == Self.header })?.value, value.count == 55 else { return nil }
        // 00-<32 hex>-<16 hex>-<2 hex>
        guard value[0] == UInt8(ascii: "0"), value[1] == UInt8(ascii: "0"),
              value[2] == UInt8(ascii: "-"), value[35] == UInt8(ascii: "-"), value[52] == UInt8(ascii: "-"),
              let traceId = Self.lowercaseHex(value[3..<35]), let spanId = Self.lowercaseHex(value[36..<52]),
              let flags = Self.lowercaseHex(value[53..<55]),
              traceId.utf8.contains(where: { $0 != UInt8(ascii: "0") }), spanId.utf8.contains(where: { $0 != UInt8(ascii: "0") })
        else { return nil }
        self.traceId = traceId
        self.spanId = spanId
        self.flags = flags
    }

    /// Hex digits as lowercase text, or nil if a byte is not one.
    private static func lowercaseHex(_ bytes: ArraySlice<UInt8>) -> String? {
        var valid = true
        let text = String(unsafeUninitializedCapacity: bytes.count) { text in
            for (index, byte) in bytes.enumerated() {
                switch byte {
                case UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "a")...UInt8(ascii: "f"): text[index] = byte
                case UInt8(ascii: "A")...UInt8(ascii: "F"): text[index] = byte + 32
                default: valid = false
                }
            }
            return valid ? bytes.count : 0
        }
        return valid ? text : nil
    }

    private init(traceId: String, spanId: String, flags: String) {
        self.traceId = traceId
        self.spanId = spanId
        self.flags = flags
    }

    /// A new trace.
    public static func start() -> TraceContext {
        TraceContext(traceId: randomHex(bytes: 16), spanId: randomHex(bytes: 8), flags: "01")
    }

    /// The context of the next hop: the same trace, a new span.
    public func child() -> TraceContext {
        TraceContext(traceId: traceId, spanId: Self.randomHex(bytes: 8), flags: flags)
    }

    public var description: String { "00-\(traceId)-\(spanId)-\(flags)" }

    /// The header to put on a record.
    public var kafkaHeader: KafkaHeader { KafkaHeader(name: Self.header, string: description) }

    private static func randomHex(bytes: Int) -> String {
        String(unsafeUninitializedCapacity: bytes * 2) { text in
            var word: UInt64 = 0
            for index in 0..<bytes {
                if index % 8 == 0 { word = SpanIdSource.next() }
                let byte = UInt8(truncatingIfNeeded: word >> (8 * UInt64(index % 8)))
                text[2 * index] = hexDigits[Int(byte >> 4)]
                text[2 * index + 1] = hexDigits[Int(byte & 0xF)]
            }
            return bytes * 2
        }
    }

    private static let hexDigits: [UInt8] = Array("0123456789abcdef".utf8)
}

/// Random 64-bit words for trace and span ids, without a system call each: SplitMix64 over a
/// process-wide counter seeded once from the system's generator. Ids only need to be unique and
/// unguessable enough for tracing, not secret; a zero word is skipped (W3C forbids all-zero ids).
private enum SpanIdSource {
    private static let counter = Atomic<UInt64>(UInt64.random(in: .min ... .max))

    static func next() -> UInt64 {
        while true {
            var value = counter.wrappingAdd(0x9E37_79B9_7F4A_7C15, ordering: .relaxed).newValue
            value = (value ^ (value >> 30)) &* 0xBF58_476D_1CE4_E5B9
            value = (value ^ (value >> 27)) &* 0x94D0_49BB_1331_11EB
            value ^= value >> 31
            if value != 0 { return value }
        }
    }
}

extension OutgoingRecord {
    /// This record with `trace` as its `traceparent` header (replacing any).
    public func traced(_ trace: TraceContext) -> OutgoingRecord {
        var record = self
        record.headers.removeAll { $0.name == TraceContext.header }
        record.headers.append(trace.kafkaHeader)
        return record
    }
}
