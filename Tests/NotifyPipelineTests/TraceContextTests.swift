import Foundation
import NotifyCore
import NotifyKafka
import NotifyRecords
import NotifySinks
import OTel
import Testing

@testable import NotifyPipeline

@Suite(.serialized) struct TraceContextTests {
    static let incoming = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"

    @Test func parsesWellFormedAndRefusesMalformedHeaders() {
        let context = TraceContext(headers: [KafkaHeader(name: "traceparent", string: Self.incoming)])
        #expect(context?.traceId == "4bf92f3577b34da6a3ce929d0e0e4736")
        #expect(context?.description == Self.incoming)
        for bad in [
            "", "01-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01", "00-xyz-00f067aa0ba902b7-01",
            "00-00000000000000000000000000000000-00f067aa0ba902b7-01", Self.incoming.uppercased(),
        ] {
            #expect(TraceContext(headers: [KafkaHeader(name: "traceparent", string: bad)]) == nil, "\(bad)")
        }
        let child = context!.child()
        #expect(child.traceId == context!.traceId)
        #expect(child.spanId != context!.spanId)
    }

    static let state = "congo=t61rcWkgMzE,rojo=00f067aa0ba902b7"
    static let headers = [
        KafkaHeader(name: "traceparent", string: incoming), KafkaHeader(name: "tracestate", string: state),
    ]
    static let upperCase = [
        KafkaHeader(name: "traceparent", string: incoming.uppercased()), KafkaHeader(name: "tracestate", string: state),
    ]

    /// `tracestate` goes on with the trace: a child keeps it, and a record traced with it carries it.
    @Test func tracestateGoesOnWithTheTrace() throws {
        let context = try #require(TraceContext(headers: Self.headers))
        let made = OutgoingRecord(topic: Topic.fanout, key: nil, value: []).traced(context.child())
        #expect(TraceContext(headers: made.headers)?.traceId == context.traceId)
        #expect(made.headers.string(for: "tracestate") == Self.state)
        #expect(TraceContext(headers: Self.upperCase) == nil, "upper-case hex is refused, and its tracestate with it")
    }

    /// The extractor reads `traceparent` through the fast parser and `tracestate` beside it; a
    /// `traceparent` with upper-case hex digits is invalid (W3C) and reads as absent, its `tracestate` too.
    /// The injector replaces what is there.
    @Test func extractorKeepsTracestateAndRefusesUpperCaseHex() {
        let extractor = KafkaHeadersExtractor()
        #expect(extractor.extract(key: "traceparent", from: Self.headers) == Self.incoming)
        #expect(extractor.extract(key: "tracestate", from: Self.headers) == Self.state)
        #expect(TraceContext(headers: Self.upperCase) == nil)
        #expect(extractor.extract(key: "traceparent", from: Self.upperCase) == nil)
        #expect(extractor.extract(key: "tracestate", from: Self.upperCase) == nil)

        var headers = Self.headers
        let next = "00-4bf92f3577b34da6a3ce929d0e0e4736-b7ad6b7169203331-01"
        KafkaHeadersInjector().inject(next, forKey: "traceparent", into: &headers)
        #expect(
            headers.filter { $0.name == "traceparent" }.map { String(decoding: $0.value ?? [], as: UTF8.self) } == [
                next
            ])
        #expect(headers.string(for: "tracestate") == Self.state)
    }

    /// With tracing off, a hop keeps the trace id and `tracestate` and takes a new span id; an
    /// upper-case `traceparent` starts a new trace with no `tracestate`.
    @Test func untracedHopKeepsTracestate() throws {
        let record = OutgoingRecord(topic: Topic.fanout, key: nil, value: [])
        let made = record.traced(RecordTracing.off.continuing(Self.headers))
        let context = try #require(TraceContext(headers: made.headers))
        #expect(context.traceId == "4bf92f3577b34da6a3ce929d0e0e4736")
        #expect(context.spanId != "00f067aa0ba902b7")
        #expect(made.headers.string(for: "tracestate") == Self.state)

        let restarted = record.traced(RecordTracing.off.continuing(Self.upperCase))
        #expect(TraceContext(headers: restarted.headers)?.traceId != "4bf92f3577b34da6a3ce929d0e0e4736")
        #expect(restarted.headers.string(for: "tracestate") == nil)
    }

    /// With swift-otel's tracer, a hop's span is a child of the record's span, and the records it
    /// makes carry that span and the `tracestate`; an upper-case `traceparent` starts a new trace.
    @Test func tracedHopContinuesTheRecordsSpanWithItsTracestate() throws {
        var configuration = OTel.Configuration.default
        configuration.traces.exporter = .none
        configuration.logs.enabled = false
        configuration.metrics.enabled = false
        let tracing = RecordTracing(tracer: try OTel.makeTracingBackend(configuration: configuration).factory)
        let record = OutgoingRecord(topic: Topic.fanout, key: nil, value: [])

        let span = tracing.startSpan("route fold", continuing: Self.headers)
        let made = record.traced(span)
        span.end()
        let context = try #require(TraceContext(headers: made.headers))
        #expect(context.traceId == "4bf92f3577b34da6a3ce929d0e0e4736")
        #expect(context.spanId != "00f067aa0ba902b7")
        // The same list members: swift-otel writes them separated by ", ".
        #expect(made.headers.string(for: "tracestate")?.replacingOccurrences(of: ", ", with: ",") == Self.state)

        let restarted = tracing.startSpan("route fold", continuing: Self.upperCase)
        let remade = record.traced(restarted)
        restarted.end()
        #expect(TraceContext(headers: remade.headers).map { $0.traceId != "4bf92f3577b34da6a3ce929d0e0e4736" } == true)
        #expect(remade.headers.string(for: "tracestate") == nil)
    }

    /// A running pipeline that has read Alice, Bob, their conversation and Bob's phone.
    func pipelineWithAliceAndBob(
        on broker: EmbeddedBroker, configuration: CoreConfiguration
    ) async throws -> RunningPipeline {
        let positions = ReadPositions()
        let pipeline = RunningPipeline(broker, configuration: configuration, observer: positions.observer)
        try await pipeline.ready()
        try await produce(Scenario.aliceAndBob, to: broker)
        try await positions.waitUntilRead([Topic.conversations, Topic.devices], on: broker)
        return pipeline
    }

    /// The trace of a message event goes on through its fanout record and its command.
    @Test func traceGoesFromMessageThroughFanoutToCommand() async throws {
        let configuration = try testCoreConfiguration()
        try await withPipelineBroker { broker in
            let pipeline = try await pipelineWithAliceAndBob(on: broker, configuration: configuration)
            let message = Scenario.message("m1", in: "c1", from: "alice", "traced", at: 1)
            try await produceRaw(
                [
                    OutgoingRecord(
                        topic: Topic.messages, key: Array("c1".utf8), value: Array(message.json.utf8),
                        headers: [KafkaHeader(name: "traceparent", string: Self.incoming)],
                        timestampMilliseconds: Scenario.base.adding(seconds: 1).milliseconds)
                ], to: broker)
            let fanout = try await readTopic(Topic.fanout, from: broker) { !$0.isEmpty }
            let commands = try await readTopic(Topic.commands, from: broker) { !$0.isEmpty }
            try await pipeline.stop()
            for record in fanout + commands {
                let context = try #require(TraceContext(headers: record.headers))
                #expect(context.traceId == "4bf92f3577b34da6a3ce929d0e0e4736")
                #expect(context.spanId != "00f067aa0ba902b7")
            }
        }
    }

    /// A message without `traceparent` starts a trace; its fanout record, its command and the
    /// sink's outcome all carry it, each hop a span of its own.
    @Test func aMessageWithoutTraceparentStartsATraceThatReachesItsOutcome() async throws {
        let configuration = try testCoreConfiguration()
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("trace-\(UUID().uuidString).jsonl")
        defer { try? FileManager.default.removeItem(at: file) }
        try await withPipelineBroker { broker in
            let pipeline = try await pipelineWithAliceAndBob(on: broker, configuration: configuration)
            try await produce([Scenario.message("m1", in: "c1", from: "alice", "untraced", at: 1)], to: broker)
            let sink = SinkRuntime(
                sink: try JSONLSink(path: file.path), configuration: SinkRuntimeConfiguration(kafka: client(broker)),
                logger: testLogger)
            let outcomes = try await withThrowingTaskGroup(of: [KafkaRecord]?.self) { group in
                group.addTask {
                    try await sink.run()
                    return nil
                }
                defer { sink.stop() }
                return try await readTopic(Topic.outcomes, from: broker) { records in
                    records.contains { record in
                        // The scenario's times are past, so the outcome is `expired`: an outcome all the same.
                        (try? JSONDecoder().decode(NotificationOutcome.self, from: Data(record.value)))
                            .map { $0.outcome != .attempting } ?? false
                    }
                }
            }
            let fanout = try await readTopic(Topic.fanout, from: broker) { !$0.isEmpty }
            let commands = try await readTopic(Topic.commands, from: broker) { !$0.isEmpty }
            try await pipeline.stop()

            let records = fanout + commands + outcomes
            #expect(!outcomes.isEmpty)
            let traces = records.map { TraceContext(headers: $0.headers) }
            #expect(traces.allSatisfy { $0 != nil }, "every hop carries a traceparent")
            #expect(Set(traces.compactMap { $0?.traceId }).count == 1, "one trace, started by the message")
            #expect(Set(traces.compactMap { $0?.spanId }).count == records.count, "a span per record")
        }
    }
}
