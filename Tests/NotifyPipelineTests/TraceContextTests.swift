import Foundation
import Kafka
import NotifyCore
import NotifySinks
import Testing
@testable import NotifyPipeline

@Suite(.serialized) struct TraceContextTests {
    static let incoming = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"

    @Test func parsesWellFormedAndRefusesMalformedHeaders() {
        let context = TraceContext(headers: [KafkaHeader(name: "traceparent", string: Self.incoming)])
        #expect(context?.traceId == "4bf92f3577b34da6a3ce929d0e0e4736")
        #expect(context?.description == Self.incoming)
        for bad in ["", "01-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01", "00-xyz-00f067aa0ba902b7-01",
                    "00-00000000000000000000000000000000-00f067aa0ba902b7-01", Self.incoming.uppercased()] {
            #expect(TraceContext(headers: [KafkaHeader(name: "traceparent", string: bad)]) == nil, "\(bad)")
        }
        let child = context!.child()
        #expect(child.traceId == context!.traceId)
        #expect(child.spanId != context!.spanId)
    }

    static let state = "congo=t61rcWkgMzE,rojo=00f067aa0ba902b7"
    static let headers = [KafkaHeader(name: "traceparent", string: incoming), KafkaHeader(name: "tracestate", string: state)]
    static let upperCase = [KafkaHeader(name: "traceparent", string: incoming.uppercased()), KafkaHeader(name: "tracestate", string: state)]

    /// `tracestate` goes on with the trace: a child keeps it, and a record traced with it carries it.
    @Test func tracestateGoesOnWithTheTrace() throws {
        let context = try #require(TraceContext(headers: Self.headers))
        let made = OutgoingRecord(topic: Topic.fanout, key: nil, value: []).traced(context.child())
        #expect(TraceContext(headers: made.headers)?.traceId == context.traceId)
        #expect(made.headers.string(for: "tracestate") == Self.state)
        #expect(TraceContext(headers: Self.upperCase) == nil, "upper-case hex is refused, and its tracestate with it")
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
            try await produceRaw([OutgoingRecord(
                topic: Topic.messages, key: Array("c1".utf8), value: Array(message.json.utf8),
                headers: [KafkaHeader(name: "traceparent", string: Self.incoming)],
                timestampMilliseconds: Scenario.base.adding(seconds: 1).milliseconds)], to: broker)
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
