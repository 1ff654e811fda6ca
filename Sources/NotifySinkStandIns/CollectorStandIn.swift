import Hummingbird
import Logging
import NotifySinks
import Synchronization

/// A loopback stand-in for an OpenTelemetry collector: receives spans over OTLP/HTTP with protobuf
/// encoding (`POST /v1/traces`, an `ExportTraceServiceRequest`) and keeps the few fields a test
/// checks a trace by. Other encodings are refused (415), undecodable bodies too (400).
public final class CollectorStandIn: Sendable {
    /// One span received.
    public struct ReceivedSpan: Sendable, Hashable, CustomStringConvertible {
        /// 32 lower-case hex digits.
        public var traceId: String
        /// 16 lower-case hex digits.
        public var spanId: String
        /// The parent's span id, nil for a trace's root.
        public var parentSpanId: String?
        public var name: String
        /// The `service.name` of the process that sent it.
        public var serviceName: String?

        public var description: String {
            "\(name) [\(serviceName ?? "?")] \(traceId)/\(spanId) parent \(parentSpanId ?? "none")"
        }
    }

    /// The path spans are sent to.
    public static let path = "/v1/traces"

    private let received = Mutex<[ReceivedSpan]>([])

    public init() {}

    /// The spans received so far, in order of arrival.
    public var spans: [ReceivedSpan] { received.withLock { $0 } }

    /// Serves on 127.0.0.1 (a free port) while `body` runs; `body` gets the base URL to set as
    /// `OTEL_EXPORTER_OTLP_ENDPOINT`.
    public func serve<Value: Sendable>(logger: Logger, body: (String) async throws -> Value) async throws -> Value {
        let router = Router()
        router.post(RouterPath(stringLiteral: Self.path)) { request, _ in
            try await self.receive(request)
        }
        return try await serveOnLoopback(router, logger: logger) { port in
            try await body("http://127.0.0.1:\(port)")
        }
    }

    private func receive(_ request: Request) async throws -> Response {
        guard request.headers[.contentType] == "application/x-protobuf" else {
            return Response(status: .unsupportedMediaType)
        }
        let body = Array(buffer: try await request.body.collect(upTo: 16 * 1024 * 1024))
        do {
            let spans = try Self.spans(inExportRequest: body[...])
            received.withLock { $0 += spans }
        } catch {
            return Response(status: .badRequest)
        }
        // An empty `ExportTraceServiceResponse`: every span accepted.
        return Response(status: .ok, headers: [.contentType: "application/x-protobuf"])
    }

    /// The spans of an `ExportTraceServiceRequest` (opentelemetry/proto/collector/trace/v1):
    /// resource_spans = 1 { resource = 1 { attributes = 1 }, scope_spans = 2 { spans = 2 } }.
    static func spans(inExportRequest request: ArraySlice<UInt8>) throws -> [ReceivedSpan] {
        var spans: [ReceivedSpan] = []
        for resourceSpans in try ProtobufMessage(request).messages(1) {
            let serviceName = try resourceSpans.messages(1).first.flatMap { try Self.serviceName(ofResource: $0) }
            for scopeSpans in try resourceSpans.messages(2) {
                for span in try scopeSpans.messages(2) {
                    spans.append(
                        ReceivedSpan(
                            traceId: hex(span.bytes(1) ?? []), spanId: hex(span.bytes(2) ?? []),
                            parentSpanId: span.bytes(4).flatMap { $0.isEmpty ? nil : hex($0) },
                            name: String(decoding: span.bytes(5) ?? [], as: UTF8.self), serviceName: serviceName))
                }
            }
        }
        return spans
    }

    /// `service.name` among a `Resource`'s attributes (KeyValue: key = 1, value = 2 { string_value = 1 }).
    private static func serviceName(ofResource resource: ProtobufMessage) throws -> String? {
        for attribute in try resource.messages(1)
        where attribute.bytes(1).map({ String(decoding: $0, as: UTF8.self) }) == "service.name" {
            return try attribute.messages(2).first?.bytes(1).map { String(decoding: $0, as: UTF8.self) }
        }
        return nil
    }

    private static func hex(_ bytes: ArraySlice<UInt8>) -> String {
        bytes.map { byte in String(byte >> 4, radix: 16) + String(byte & 0xF, radix: 16) }.joined()
    }
}

/// The length-delimited fields of one protobuf message in wire format; the others are skipped.
struct ProtobufMessage {
    struct Malformed: Error {}

    private var fields: [(number: UInt64, value: ArraySlice<UInt8>)] = []

    init(_ bytes: ArraySlice<UInt8>) throws {
        var index = bytes.startIndex
        func varint() throws -> UInt64 {
            var value: UInt64 = 0
            var shift: UInt64 = 0
            while index < bytes.endIndex, shift < 64 {
                let byte = bytes[index]
                index += 1
                value |= UInt64(byte & 0x7F) << shift
                if byte & 0x80 == 0 { return value }
                shift += 7
            }
            throw Malformed()
        }
        while index < bytes.endIndex {
            let key = try varint()
            switch key & 7 {
            case 0: _ = try varint()
            case 1: index += 8
            case 5: index += 4
            case 2:
                let length = try varint()
                guard length <= UInt64(bytes.endIndex - index) else { throw Malformed() }
                fields.append((key >> 3, bytes[index..<index + Int(length)]))
                index += Int(length)
            default: throw Malformed()
            }
            guard index <= bytes.endIndex else { throw Malformed() }
        }
    }

    /// The last value of field `number` (bytes or a string), nil if absent.
    func bytes(_ number: UInt64) -> ArraySlice<UInt8>? {
        fields.last { $0.number == number }?.value
    }

    /// Every value of the repeated message field `number`.
    func messages(_ number: UInt64) throws -> [ProtobufMessage] {
        try fields.filter { $0.number == number }.map { try ProtobufMessage($0.value) }
    }
}
