import NotifyKafka
import Tracing

/// Whether the stages and sinks record a span for each record they handle, and how a record's trace
/// goes on through the records made from it.
///
/// On when the process bootstrapped a tracer (`notify` does when `OTEL_*` asks for it, see
/// docs/operations.md): every hop starts a span that continues the trace in the record's headers
/// (read by ``KafkaHeadersExtractor``) and writes that span's context into the records it makes
/// (``KafkaHeadersInjector``), so the spans of one message form one tree. Off otherwise: no span,
/// no clock read, nothing allocated beyond the headers; the ids are carried as before (``TraceContext``),
/// a new span id per record.
public struct RecordTracing: Sendable {
    private let tracer: (any Tracer)?

    /// No spans: trace ids carried only.
    public static let off = RecordTracing(tracer: nil)

    /// On if `InstrumentationSystem` was bootstrapped with a tracer, off if it has only the no-op one.
    /// Read it once, where records start to be handled, not per record.
    public static var bootstrapped: RecordTracing {
        let tracer = InstrumentationSystem.tracer
        return tracer is NoOpTracer ? .off : RecordTracing(tracer: tracer)
    }

    /// Spans recorded with `tracer`.
    public init(tracer: any Tracer) {
        self.init(tracer: Optional(tracer))
    }

    private init(tracer: (any Tracer)?) {
        self.tracer = tracer
    }

    /// Whether spans are recorded.
    public var isOn: Bool { tracer != nil }

    /// The time a span that is only known to be wanted after the work starts at (nil when off: no clock read).
    public func startTime() -> DefaultTracerClock.Instant? {
        tracer == nil ? nil : DefaultTracerClock.now
    }

    /// The span `name` of the hop that handles a record with `headers`, started at `start` (now if nil):
    /// the child of the record's span, or the root of a new trace when the record carries no valid
    /// `traceparent`. Off: no span, the record's trace (or a new one) goes on with a new span id per record made.
    public func startSpan(
        _ name: String, continuing headers: [KafkaHeader], kind: SpanKind = .consumer,
        at start: DefaultTracerClock.Instant? = nil
    ) -> RecordSpan {
        guard let tracer else { return RecordSpan(trace: TraceContext(headers: headers) ?? .start(), newSpanIds: true) }
        var context = InstrumentationContext.topLevel
        tracer.extract(headers, into: &context, using: KafkaHeadersExtractor())
        let span = tracer.startSpan(name, context: context, ofKind: kind, at: start ?? DefaultTracerClock.now)
        return RecordSpan(span: span, tracer: tracer)
    }

    /// The trace of a record passed on by a hop that records no span of its own: when on, the records
    /// made carry the record's own context, so their spans are children of the span that made it; when
    /// off, each takes a new span id.
    public func continuing(_ headers: [KafkaHeader]) -> RecordSpan {
        RecordSpan(trace: TraceContext(headers: headers) ?? .start(), newSpanIds: tracer == nil)
    }
}

/// The span of one hop (a stage's fold of a record, a sink's delivery attempt), or, with no span
/// recorded, the trace the hop continues. End it once the hop's work is done.
public struct RecordSpan: Sendable {
    private let span: (any Span)?
    private let tracer: (any Tracer)?
    private let trace: TraceContext?
    private let newSpanIds: Bool

    init(span: any Span, tracer: any Tracer) {
        (self.span, self.tracer, trace, newSpanIds) = (span, tracer, nil, false)
    }

    init(trace: TraceContext, newSpanIds: Bool) {
        (span, tracer, self.trace, self.newSpanIds) = (nil, nil, trace, newSpanIds)
    }

    /// The span's context, to make it the parent of spans started inside the hop (an HTTP client's),
    /// with `InstrumentationContext.$current.withValue(_:)`; nil when no span is recorded.
    public var context: InstrumentationContext? { span?.context }

    /// Sets an attribute of the span (nothing when none is recorded).
    public func set(_ name: String, _ value: some SpanAttributeConvertible) {
        span?.attributes[name] = value.toSpanAttribute()
    }

    /// Marks the span as failed with `message` (nothing when none is recorded).
    public func fail(_ message: String) {
        span?.setStatus(SpanStatus(code: .error, message: message))
    }

    /// Ends the span (nothing when none is recorded).
    public func end() {
        span?.end()
    }

    /// The `traceparent` and `tracestate` headers of a record made in this hop.
    fileprivate func headers() -> [KafkaHeader] {
        var headers: [KafkaHeader] = []
        if let span, let tracer {
            tracer.inject(span.context, into: &headers, using: KafkaHeadersInjector())
        }
        return headers
    }

    /// The trace of a record made in this hop when no span is recorded.
    fileprivate var carried: TraceContext? {
        guard let trace else { return nil }
        return newSpanIds ? trace.child() : trace
    }
}

extension OutgoingRecord {
    /// This record in `hop`'s trace: its `traceparent` names the hop's span (or a new span id of the
    /// trace when none is recorded), its `tracestate` is the trace's.
    public func traced(_ hop: RecordSpan) -> OutgoingRecord {
        if let trace = hop.carried { return traced(trace) }
        var record = self
        record.headers.removeAll { $0.name == TraceContext.header || $0.name == TraceContext.stateHeader }
        record.headers += hop.headers()
        return record
    }
}

/// Reads a trace context out of Kafka record headers for swift-distributed-tracing. `traceparent`
/// goes through ``TraceContext``'s parser: a malformed one, or one with upper-case hex digits, reads as
/// absent (a new trace starts), and so does its `tracestate`.
public struct KafkaHeadersExtractor: Extractor {
    public init() {}

    public func extract(key: String, from headers: [KafkaHeader]) -> String? {
        switch key {
        case TraceContext.header: TraceContext(headers: headers)?.description
        case TraceContext.stateHeader: TraceContext(headers: headers)?.state.map { String(decoding: $0, as: UTF8.self) }
        default: headers.string(for: key)
        }
    }
}

/// Writes a trace context into Kafka record headers for swift-distributed-tracing, replacing headers
/// of the same name.
public struct KafkaHeadersInjector: Injector {
    public init() {}

    public func inject(_ value: String, forKey key: String, into headers: inout [KafkaHeader]) {
        headers.removeAll { $0.name == key }
        headers.append(KafkaHeader(name: key, string: value))
    }
}
