import Foundation
import NotifyCore
import NotifyKafka
import NotifyRecords
import NotifySinkStandIns
import NotifySinks
import Testing

@testable import NotifyPipeline

/// Spans exported over OTLP/HTTP by real `notify pipeline` and `notify sink` processes.
@Suite(.serialized) struct TracingProcessTests {
    /// A message produced without `traceparent` goes through both stages and a webhook sink as real
    /// processes exporting to a collector stand-in: every span they send is of the trace the pipeline
    /// started, the parent links form one tree rooted at stage 1's fold of the message, with a fold span
    /// of each stage, the sink's delivery attempt and its HTTP client's request inside it, and the
    /// outcome record names the delivery attempt's span. The spans arrive only because the processes
    /// stop: the exporter's batch delay is set to a minute, and graceful shutdown flushes them.
    @Test func spansOfOneMessageFromProduceToOutcomeFormOneTrace() async throws {
        let collector = CollectorStandIn()
        let secret = Array("webhook secret".utf8)
        let secretFile = FileManager.default.temporaryDirectory.appendingPathComponent(
            "tracing-secret-\(UUID().uuidString)")
        try Data(secret).write(to: secretFile)
        defer { try? FileManager.default.removeItem(at: secretFile) }
        let receiver = WebhookReceiver(secret: secret)
        let authority = try await TestCertificateAuthority.make()
        defer { authority.remove() }
        let (outcome, spans) = try await collector.serve(logger: testLogger) { endpoint in
            try await receiver.serve(tls: authority, logger: testLogger) { port in
                try await withPipelineBroker { broker in
                    try await produce(Scenario.aliceAndBob, to: broker)
                    let exporting = ["OTEL_EXPORTER_OTLP_ENDPOINT": endpoint, "OTEL_BSP_SCHEDULE_DELAY": "60000"]
                    let pipeline = try PipelineProcess(broker: broker, environment: exporting)
                    defer { pipeline.kill() }
                    let sink = try PipelineProcess(
                        notify: [
                            "sink", "--kind", "webhook", "--bootstrap", broker.bootstrapServers, "--http-listen",
                            "127.0.0.1:0",
                            "--url", "https://127.0.0.1:\(port)\(WebhookReceiver.path)", "--secret-file",
                            secretFile.path,
                            "--ca-file", authority.caFile,
                        ], environment: exporting)
                    defer { sink.kill() }
                    // Sent now, so that its command has not expired when the sink reads it.
                    let now = Date().timeIntervalSince1970 - Double(Scenario.base.milliseconds) / 1000
                    try await produce([Scenario.message("m1", in: "c1", from: "alice", "traced", at: now)], to: broker)
                    let outcomes = try await readTopic(Topic.outcomes, from: broker, timeout: .seconds(120)) {
                        records in
                        records.contains { Self.outcome(of: $0)?.outcome == .delivered }
                    }
                    await sink.stop(with: SIGTERM)
                    await pipeline.stop(with: SIGTERM)
                    let delivered = try #require(outcomes.first { Self.outcome(of: $0)?.outcome == .delivered })
                    // Sent before the processes exited; a moment for the last request's answer.
                    let deadline = ContinuousClock.now.advanced(by: .seconds(20))
                    while !Set(collector.spans.map(\.name)).isSuperset(of: [
                        "fanout fold", "route fold", "webhook delivery attempt",
                    ]),
                        ContinuousClock.now < deadline
                    {
                        try await Task.sleep(for: .milliseconds(100))
                    }
                    return (delivered, collector.spans)
                }
            }
        }

        let trace = try #require(TraceContext(headers: outcome.headers), "the outcome carries a traceparent")
        #expect(Set(spans.map(\.traceId)) == [trace.traceId], "every span is of the outcome's trace: \(spans)")
        let byId = Dictionary(spans.map { ($0.spanId, $0) }, uniquingKeysWith: { first, _ in first })
        #expect(byId.count == spans.count, "span ids are unique")
        let roots = spans.filter { $0.parentSpanId == nil }
        #expect(roots.map(\.name) == ["fanout fold"], "one root, stage 1's fold of the message: \(roots)")
        #expect(roots.first?.serviceName == "notify-pipeline")
        for span in spans {
            var ancestor = span
            var steps = 0
            while let parent = ancestor.parentSpanId, steps <= spans.count {
                guard let next = byId[parent] else {
                    Issue.record("\(span) has a parent that was not exported")
                    break
                }
                (ancestor, steps) = (next, steps + 1)
            }
            #expect(ancestor == roots.first, "\(span) is in the tree of the root")
        }
        let attempts = spans.filter { $0.name == "webhook delivery attempt" }
        #expect(attempts.count == 1)
        #expect(attempts.allSatisfy { $0.serviceName == "notify-sink-webhook" })
        #expect(
            attempts.allSatisfy { byId[$0.parentSpanId ?? ""]?.name == "route fold" },
            "the attempt continues the command's fold")
        #expect(spans.contains { $0.name == "route fold" && byId[$0.parentSpanId ?? ""]?.name == "fanout fold" })
        #expect(
            spans.contains { $0.parentSpanId == attempts.first?.spanId && $0.name == "POST" },
            "AsyncHTTPClient's request span is inside the delivery attempt")
        #expect(trace.spanId == attempts.first?.spanId, "the outcome's traceparent names the delivery attempt")
    }

    static func outcome(of record: KafkaRecord) -> NotificationOutcome? {
        try? JSONDecoder().decode(NotificationOutcome.self, from: Data(record.value))
    }
}
