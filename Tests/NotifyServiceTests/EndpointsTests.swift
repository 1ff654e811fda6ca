import Foundation
import Logging
import Testing
@testable import NotifyService

@Suite("HTTP endpoints: health, readiness, metrics")
struct EndpointsTests {
    @Test("/healthz is ok while alive and 503 once marked unhealthy")
    func health() async throws {
        try await withRunningShell { shell, port in
            let healthy = try await get("/healthz", port: port)
            #expect(healthy.status == 200)
            #expect(healthy.body == "ok\n")
            shell.status.markUnhealthy("kafka client failed")
            let unhealthy = try await get("/healthz", port: port)
            #expect(unhealthy.status == 503)
            #expect(unhealthy.body.contains("kafka client failed"))
        }
    }

    @Test("/readyz is 503 until the caller marks the state restored, then 200")
    func readiness() async throws {
        try await withRunningShell { shell, port in
            let before = try await get("/readyz", port: port)
            #expect(before.status == 503)
            #expect(before.body == "not ready: starting\n")
            shell.status.markReady()
            let after = try await get("/readyz", port: port)
            #expect(after.status == 200)
            #expect(after.body == "ready\n")
            shell.status.markNotReady("restoring state")
            #expect(try await get("/readyz", port: port).status == 503)
        }
    }

    @Test("/metrics is Prometheus text with every named metric, and its counters move")
    func metrics() async throws {
        try await withRunningShell { shell, port in
            let metrics = shell.metrics
            metrics.recordConsumed(topic: "chat.messages", count: 3)
            metrics.recordProduced(topic: "notify.commands", count: 2)
            metrics.recordProcessingLatency(stage: "route", .milliseconds(3))
            metrics.recordProcessingLatency(stage: "route", .milliseconds(700))
            metrics.setConsumerLag(topic: "chat.messages", partition: 4, lag: 17)
            metrics.recordSuppression(reason: "muted")
            metrics.recordIdentityWait()
            metrics.recordIdentityTimeout()
            metrics.recordEventTimeForced(stage: "route", count: 2)
            metrics.recordMisplaced(topic: "chat.devices", count: 3)
            metrics.recordDeadLetter(reason: "bad-json", source: "chat.messages")
            metrics.recordSinkOutcome(kind: "apns", outcome: "token-invalid", reason: "Unregistered")
            metrics.recordRetry(kind: "fcm", reason: "429")
            metrics.setInAppConnections(5)
            metrics.recordReplacement(kind: "apns")
            metrics.recordDeadLetterLost(source: "chat.messages")

            let response = try await get("/metrics", port: port)
            #expect(response.status == 200)
            #expect(response.contentType?.hasPrefix("text/plain; version=0.0.4") == true)
            let exposition = try PrometheusText.parse(response.body)
            for metric in MetricName.catalogue {
                #expect(exposition.types[metric.name] == metric.type, "\(metric.name) has TYPE \(exposition.types[metric.name] ?? "none")")
            }
            #expect(exposition.value("notify_records_consumed_total", ["topic": "chat.messages"]) == 3)
            #expect(exposition.value("notify_sink_replacements_total", ["kind": "apns"]) == 1)
            #expect(exposition.value("notify_dlq_write_failures_total", ["source": "chat.messages"]) == 1)
            #expect(exposition.value("notify_records_produced_total", ["topic": "notify.commands"]) == 2)
            #expect(exposition.value("notify_consumer_lag", ["topic": "chat.messages", "partition": "4"]) == 17)
            #expect(exposition.value("notify_event_time_forced_total", ["stage": "route"]) == 2)
            #expect(exposition.value("notify_misplaced_records_total", ["topic": "chat.devices"]) == 3)
            #expect(exposition.value("notify_sink_outcomes_total", ["kind": "apns", "outcome": "token-invalid", "reason": "Unregistered"]) == 1)
            #expect(exposition.value("notify_processing_latency_seconds_count", ["stage": "route"]) == 2)
            #expect(exposition.value("notify_processing_latency_seconds_bucket", ["stage": "route", "le": "0.005"]) == 1)
            #expect(exposition.value("notify_processing_latency_seconds_bucket", ["stage": "route", "le": "+Inf"]) == 2)
            #expect(exposition.value("notify_inapp_connections", [:]) == 5)

            metrics.recordConsumed(topic: "chat.messages", count: 4)
            let later = try PrometheusText.parse(try await get("/metrics", port: port).body)
            #expect(later.value("notify_records_consumed_total", ["topic": "chat.messages"]) == 7)
        }
    }

    @Test("with http.console off, neither the page nor its feed is served")
    func consoleOff() async throws {
        var settings = testSettings()
        settings.http.console = false
        let shell = ServiceShell(settings: settings, logger: Logger(label: "test"))
        try await withRunningShell(shell) { _, port in
            let page = try await get("/", port: port)
            let feed = try await get("/console/events", port: port)
            let health = try await get("/healthz", port: port)
            #expect(page.status == 404)
            #expect(feed.status == 404)
            #expect(health.status == 200)
        }
    }

    @Test("the runbook's metric table lists exactly the exported metrics")
    func runbookListsMetrics() throws {
        let path = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("docs/operations.md")
        let runbook = try String(contentsOf: path, encoding: .utf8)
        let documented = Set(runbook.split(separator: "\n").compactMap { line -> String? in
            guard line.hasPrefix("| `notify_") else { return nil }
            return line.split(separator: "`")[1].description
        })
        #expect(documented == Set(MetricName.catalogue.map(\.name)))
    }
}

/// A strict reader of the Prometheus text exposition format (version 0.0.4): every line must be a
/// comment, a `# TYPE`/`# HELP` line or a well-formed sample.
struct PrometheusText {
    struct Malformed: Error, CustomStringConvertible {
        var line: String
        var description: String { "not Prometheus text: \(line)" }
    }

    var types: [String: String] = [:]
    var samples: [(name: String, labels: [String: String], value: Double)] = []

    func value(_ name: String, _ labels: [String: String]) -> Double? {
        samples.first { $0.name == name && $0.labels == labels }?.value
    }

    static func parse(_ text: String) throws -> PrometheusText {
        var result = PrometheusText()
        for line in text.split(separator: "\n", omittingEmptySubsequences: true) {
            if let type = line.wholeMatch(of: /# TYPE ([a-zA-Z_:][a-zA-Z0-9_:]*) (counter|gauge|histogram|summary|untyped)/) {
                result.types[String(type.1)] = String(type.2)
                continue
            }
            if line.hasPrefix("#") { continue }
            guard let sample = line.wholeMatch(of: /([a-zA-Z_:][a-zA-Z0-9_:]*)(\{[^}]*\})? ([^ ]+)( -?[0-9]+)?/),
                  let value = Double(sample.3) ?? (sample.3 == "+Inf" ? .infinity : nil)
            else { throw Malformed(line: String(line)) }
            var labels: [String: String] = [:]
            if let body = sample.2?.dropFirst().dropLast(), !body.isEmpty {
                for pair in body.matches(of: /([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)",?/) {
                    labels[String(pair.1)] = String(pair.2)
                }
                guard body.matches(of: /([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)",?/).map({ $0.0.count }).reduce(0, +) == body.count
                else { throw Malformed(line: String(line)) }
            }
            result.samples.append((String(sample.1), labels, value))
        }
        return result
    }
}
