import Kafka

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

    /// The context in `headers`, if there is a well-formed one.
    public init?(headers: [KafkaHeader]) {
        guard let text = headers.string(for: Self.header) else { return nil }
        let parts = text.split(separator: "-")
        guard parts.count == 4, parts[0] == "00", parts[1].count == 32, parts[2].count == 16, parts[3].count == 2,
              parts[1...3].allSatisfy({ $0.allSatisfy(\.isHexDigit) }),
              parts[1] != String(repeating: "0", count: 32), parts[2] != String(repeating: "0", count: 16) else {
            return nil
        }
        traceId = parts[1].lowercased()
        spanId = parts[2].lowercased()
        flags = String(parts[3])
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
        var text = ""
        for _ in 0..<bytes {
            let byte = UInt8.random(in: 1...255)
            text += String(byte >> 4, radix: 16) + String(byte & 0xF, radix: 16)
        }
        return text
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
