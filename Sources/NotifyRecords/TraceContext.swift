import NotifyKafka
import Synchronization

/// A W3C trace context (`traceparent`: `00-<trace id>-<parent span id>-<flags>`, and the vendors'
/// `tracestate` beside it), carried in the Kafka headers of every record made from a message: the
/// message event, its fanout records, their commands and the sinks' outcomes. Each hop keeps the
/// trace id (and `tracestate`) and takes a new span id: the id of the span it records when tracing is
/// on (``RecordTracing``), a fresh one otherwise.
public struct TraceContext: Sendable, Hashable, CustomStringConvertible {
    /// The header that carries it.
    public static let header = "traceparent"
    /// The header that carries the vendors' state, passed on unchanged with a valid `traceparent`.
    public static let stateHeader = "tracestate"

    // The ids as numbers, not text: a record's trace is read, continued and written once per hop,
    // and numbers need no allocation. They are text only in the header (and when asked for).
    private let traceHigh: UInt64
    private let traceLow: UInt64
    private let span: UInt64
    private let flagBits: UInt8
    /// The `tracestate` header's value as it came, if there was one.
    public let state: [UInt8]?

    /// 32 lowercase hex digits.
    public var traceId: String { Self.hex(traceHigh, digits: 16) + Self.hex(traceLow, digits: 16) }
    /// 16 lowercase hex digits.
    public var spanId: String { Self.hex(span, digits: 16) }
    /// `01` when sampled.
    public var flags: String { Self.hex(UInt64(flagBits), digits: 2) }

    /// The context in `headers`, if there is a well-formed one, with its `tracestate`. Hex digits must
    /// be lower-case: the W3C spec makes a `traceparent` with upper-case ones invalid, and an invalid
    /// one is treated as absent (the receiver starts a new trace).
    public init?(headers: [KafkaHeader]) {
        guard let value = headers.first(where: { $0.name == Self.header })?.value, value.count == Self.length else {
            return nil
        }
        // 00-<32 hex>-<16 hex>-<2 hex>
        guard value[0] == UInt8(ascii: "0"), value[1] == UInt8(ascii: "0"),
            value[2] == UInt8(ascii: "-"), value[35] == UInt8(ascii: "-"), value[52] == UInt8(ascii: "-"),
            let traceHigh = Self.number(value[3..<19]), let traceLow = Self.number(value[19..<35]),
            let span = Self.number(value[36..<52]), let flags = Self.number(value[53..<55]),
            traceHigh | traceLow != 0, span != 0
        else { return nil }
        let state = headers.first(where: { $0.name == Self.stateHeader })?.value
        self.init(traceHigh: traceHigh, traceLow: traceLow, span: span, flagBits: UInt8(flags), state: state)
    }

    private init(traceHigh: UInt64, traceLow: UInt64, span: UInt64, flagBits: UInt8, state: [UInt8]? = nil) {
        self.traceHigh = traceHigh
        self.traceLow = traceLow
        self.span = span
        self.flagBits = flagBits
        self.state = state
    }

    /// A new trace.
    public static func start() -> TraceContext {
        TraceContext(
            traceHigh: SpanIdSource.next(), traceLow: SpanIdSource.next(), span: SpanIdSource.next(), flagBits: 1)
    }

    /// The context of the next hop: the same trace and `tracestate`, a new span.
    public func child() -> TraceContext {
        TraceContext(
            traceHigh: traceHigh, traceLow: traceLow, span: SpanIdSource.next(), flagBits: flagBits, state: state)
    }

    public var description: String { String(decoding: headerValue, as: UTF8.self) }

    /// The header to put on a record.
    public var kafkaHeader: KafkaHeader { KafkaHeader(name: Self.header, value: headerValue) }

    /// The length of `00-<trace id>-<span id>-<flags>`.
    private static let length = 55

    private var headerValue: [UInt8] {
        [UInt8](unsafeUninitializedCapacity: Self.length) { text, count in
            text[0] = UInt8(ascii: "0")
            text[1] = UInt8(ascii: "0")
            text[2] = UInt8(ascii: "-")
            text[35] = UInt8(ascii: "-")
            text[52] = UInt8(ascii: "-")
            Self.writeHex(traceHigh, digits: 16, into: text, at: 3)
            Self.writeHex(traceLow, digits: 16, into: text, at: 19)
            Self.writeHex(span, digits: 16, into: text, at: 36)
            Self.writeHex(UInt64(flagBits), digits: 2, into: text, at: 53)
            count = Self.length
        }
    }

    /// The number that lower-case hex digits spell, or nil if a byte is not one.
    private static func number(_ digits: ArraySlice<UInt8>) -> UInt64? {
        var value: UInt64 = 0
        for byte in digits {
            let digit: UInt8
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = byte - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = byte - UInt8(ascii: "a") + 10
            default: return nil
            }
            value = value << 4 | UInt64(digit)
        }
        return value
    }

    /// Writes the low `digits` hex digits of `value`, lowercase, most significant first.
    private static func writeHex(
        _ value: UInt64, digits: Int, into text: UnsafeMutableBufferPointer<UInt8>, at start: Int
    ) {
        for index in 0..<digits {
            text[start + index] = hexDigits[Int(truncatingIfNeeded: value >> (4 * UInt64(digits - 1 - index))) & 0xF]
        }
    }

    /// The low `digits` hex digits of `value` as lowercase text.
    private static func hex(_ value: UInt64, digits: Int) -> String {
        String(unsafeUninitializedCapacity: digits) { text in
            writeHex(value, digits: digits, into: text, at: 0)
            return digits
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
    /// This record with `trace` as its `traceparent` and `tracestate` headers (replacing any).
    public func traced(_ trace: TraceContext) -> OutgoingRecord {
        var record = self
        record.headers.removeAll { $0.name == TraceContext.header || $0.name == TraceContext.stateHeader }
        record.headers.append(trace.kafkaHeader)
        if let state = trace.state { record.headers.append(KafkaHeader(name: TraceContext.stateHeader, value: state)) }
        return record
    }
}
