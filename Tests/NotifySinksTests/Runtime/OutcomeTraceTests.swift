import Foundation
import NotifyCore
import NotifyKafka
import NotifyPipeline
import NotifyRecords
import NotifySinks
import Testing

@Suite(.serialized) struct OutcomeTraceTests {
    /// An outcome continues the trace of the command it reports on; the observer hears about it.
    @Test func outcomeCarriesTheCommandsTrace() async throws {
        let incoming = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"
        try await withSinkTopics { broker in
            let command = makeCommand(id: "traced", userId: "u1", deviceId: "d1", token: "00aa")
            let producer = try KafkaProducer(configuration: kafkaConfiguration(broker), logger: testLogger)
            _ = try await producer.send(
                OutgoingRecord(
                    topic: "notify.commands", key: Array("u1".utf8), value: json(command),
                    headers: [KafkaHeader(name: "traceparent", string: incoming)]))
            await producer.close()
            let file = FileManager.default.temporaryDirectory.appendingPathComponent("trace-\(UUID().uuidString).jsonl")
            defer { try? FileManager.default.removeItem(at: file) }
            let heard = OutcomesHeard()
            let runtime = SinkRuntime(
                sink: try JSONLSink(path: file.path),
                configuration: SinkRuntimeConfiguration(
                    kafka: kafkaConfiguration(broker), observer: SinkObserver(onOutcome: { heard.add($0) })),
                logger: testLogger)
            let records = try await withRunningSink(runtime) {
                try await waitUntil { try await !readTopic("notify.outcomes", on: broker).isEmpty }
                return try await readTopic("notify.outcomes", on: broker)
            }
            let outcome = try #require(records.first)
            let trace = try #require(TraceContext(headers: outcome.headers))
            #expect(trace.traceId == "0af7651916cd43dd8448eb211c80319c")
            #expect(trace.spanId != "b7ad6b7169203331")
            #expect(heard.commandIds == ["traced"])
        }
    }
}

/// Outcomes the observer heard.
final class OutcomesHeard: @unchecked Sendable {
    private let lock = NSLock()
    private var ids: [String] = []

    func add(_ outcome: NotificationOutcome) {
        lock.lock()
        ids.append(outcome.commandId)
        lock.unlock()
    }

    var commandIds: [String] {
        lock.lock()
        defer { lock.unlock() }
        return ids
    }
}
