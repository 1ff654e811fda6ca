import Foundation
import Logging
import NotifyBuild
import NotifyTestSupport
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
            metrics.startPipelineSeries(stages: [("route", ["chat.devices"])])
            metrics.startSinkSeries(kind: "apns")
            metrics.startInAppGatewaySeries()
            metrics.recordConsumed(topic: "chat.messages", count: 3)
            metrics.recordProduced(topic: "notify.commands", count: 2)
            metrics.recordProcessingLatency(stage: "route", records: 1, .milliseconds(3))
            metrics.recordProcessingLatency(stage: "route", records: 1, .milliseconds(700))
            metrics.setConsumerLag(topic: "chat.messages", partition: 4, lag: 17)
            metrics.recordSuppression(reason: .muted)
            metrics.recordIdentityWaits(1)
            metrics.recordIdentityTimeouts(1)
            metrics.recordEventTimeForced(stage: "route", count: 2)
            metrics.recordEventTimeLate(stage: "route", count: 4)
            metrics.recordReadLate(topic: "chat.devices", count: 6)
            metrics.recordEventTimeWaits(stage: "route", [.milliseconds(3), .milliseconds(12)])
            metrics.recordStageBusy(stage: "route", .milliseconds(500))
            metrics.recordStageBusy(stage: "route", .milliseconds(250))
            metrics.recordMisplaced(topic: "chat.devices", count: 3)
            metrics.recordDeadLetter(source: "chat.messages")
            metrics.recordSinkOutcome(kind: "apns", outcome: .tokenInvalid)
            metrics.recordRetry(kind: "fcm")
            metrics.setInAppConnections(5)
            metrics.recordReplacement(kind: "apns")
            metrics.recordDeadLetterLost(source: "chat.messages")

            let response = try await get("/metrics", port: port)
            #expect(response.status == 200)
            #expect(response.contentType?.hasPrefix("text/plain; version=0.0.4") == true)
            let exposition = try PrometheusText.parse(response.body)
            for metric in MetricName.catalogue {
                #expect(
                    exposition.types[metric.name] == metric.type.rawValue,
                    "\(metric.name) has TYPE \(exposition.types[metric.name] ?? "none")")
                #expect(
                    exposition.helps[metric.name] == metric.help,
                    "\(metric.name) has HELP \(exposition.helps[metric.name] ?? "none")")
            }
            #expect(exposition.value("notify_records_consumed_total", ["topic": "chat.messages"]) == 3)
            #expect(exposition.value("notify_sink_replacements_total", ["kind": "apns"]) == 1)
            #expect(exposition.value("notify_dlq_write_failures_total", ["source": "chat.messages"]) == 1)
            #expect(exposition.value("notify_dlq_records_total", ["source": "chat.messages"]) == 1)
            #expect(exposition.value("notify_records_produced_total", ["topic": "notify.commands"]) == 2)
            #expect(exposition.value("notify_consumer_lag", ["topic": "chat.messages", "partition": "4"]) == 17)
            #expect(exposition.value("notify_event_time_forced_total", ["stage": "route"]) == 2)
            #expect(exposition.value("notify_event_time_late_total", ["stage": "route"]) == 4)
            #expect(exposition.value("notify_event_time_read_late_total", ["topic": "chat.devices"]) == 6)
            #expect(exposition.value("notify_event_time_wait_seconds_count", ["stage": "route"]) == 2)
            #expect(exposition.value("notify_event_time_wait_seconds_sum", ["stage": "route"]) == 0.015)
            #expect(exposition.value("notify_stage_busy_seconds_total", ["stage": "route"]) == 0.75)
            #expect(exposition.value("notify_misplaced_records_total", ["topic": "chat.devices"]) == 3)
            #expect(exposition.value("notify_sink_outcomes_total", ["kind": "apns", "outcome": "token-invalid"]) == 1)
            #expect(exposition.value("notify_retries_total", ["kind": "fcm"]) == 1)
            #expect(exposition.value("notify_suppressions_total", ["reason": "muted"]) == 1)
            #expect(exposition.value("notify_identity_timeouts_total", [:]) == 1)
            #expect(exposition.value("notify_processing_latency_seconds_count", ["stage": "route"]) == 2)
            #expect(
                exposition.value("notify_processing_latency_seconds_bucket", ["stage": "route", "le": "0.005"]) == 1)
            #expect(
                exposition.value("notify_processing_latency_seconds_bucket", ["stage": "route", "le": "+Inf"]) == 2)
            #expect(exposition.value("notify_inapp_connections", [:]) == 5)
            #expect(
                exposition.value("notify_build_info", ["version": NotifyBuild.version, "commit": NotifyBuild.commit])
                    == 1)

            metrics.recordConsumed(topic: "chat.messages", count: 4)
            let later = try PrometheusText.parse(try await get("/metrics", port: port).body)
            #expect(later.value("notify_records_consumed_total", ["topic": "chat.messages"]) == 7)
        }
    }

    @Test("a family records per record: a batch of three adds three observations")
    func latencyPerRecord() async throws {
        let metrics = NotifyMetrics()
        metrics.recordProcessingLatency(stage: "fanout", records: 3, .milliseconds(4))
        let exposition = try PrometheusText.parse(metrics.exposition())
        #expect(exposition.value("notify_processing_latency_seconds_count", ["stage": "fanout"]) == 3)
        #expect(exposition.value("notify_processing_latency_seconds_bucket", ["stage": "fanout", "le": "0.005"]) == 3)
    }

    @Test("the series of the stages, a sink and the gateway exist at zero before anything happens")
    func seriesStartAtZero() throws {
        let metrics = NotifyMetrics()
        let before = try PrometheusText.parse(metrics.exposition())
        #expect(before.samples(of: MetricName.identityTimeouts).isEmpty)
        #expect(
            before.types[MetricName.identityTimeouts] == nil, "a process without stages does not declare their families"
        )
        metrics.startPipelineSeries(stages: [("fanout", ["chat.messages", "chat.identities"])])
        metrics.startSinkSeries(kind: "webhook")
        metrics.startInAppGatewaySeries()
        let exposition = try PrometheusText.parse(metrics.exposition())
        #expect(exposition.value(MetricName.identityTimeouts, [:]) == 0)
        #expect(exposition.value(MetricName.identityWaits, [:]) == 0)
        #expect(exposition.value(MetricName.deadLetters, ["source": "chat.identities"]) == 0)
        #expect(exposition.value(MetricName.deadLetters, ["source": "notify.commands"]) == 0)
        #expect(exposition.value(MetricName.deadLettersLost, ["source": "chat.messages"]) == 0)
        #expect(exposition.value(MetricName.retries, ["kind": "webhook"]) == 0)
        #expect(exposition.value(MetricName.sinkReplacements, ["kind": "webhook"]) == 0)
        for outcome in ["delivered", "expired", "token-invalid", "failed", "undeliverable-local"] {
            #expect(
                exposition.value(MetricName.sinkOutcomes, ["kind": "webhook", "outcome": outcome]) == 0, "\(outcome)")
        }
        #expect(exposition.value(MetricName.suppressions, ["reason": "own-message"]) == 0)
        #expect(exposition.value(MetricName.eventTimeForced, ["stage": "fanout"]) == 0)
        #expect(exposition.value(MetricName.eventTimeLate, ["stage": "fanout"]) == 0)
        #expect(exposition.value(MetricName.eventTimeReadLate, ["topic": "chat.messages"]) == 0)
        #expect(exposition.value(MetricName.eventTimeReadLate, ["topic": "chat.identities"]) == 0)
        #expect(exposition.value("notify_processing_latency_seconds_count", ["stage": "fanout"]) == 0)
        #expect(exposition.value(MetricName.inAppConnections, [:]) == 0)
        // No placeholder label values: every label of every sample has a real value.
        for sample in exposition.samples {
            #expect(
                !sample.labels.values.contains { ["", "none", "unknown"].contains($0) }
                    || sample.name == MetricName.buildInfo,
                "\(sample.name) \(sample.labels)")
        }
    }

    @Test("the process's figures come from /proc: CPU, memory, descriptors, start time")
    func processFigures() throws {
        let exposition = try PrometheusText.parse(NotifyMetrics().exposition())
        let cpu = try #require(exposition.value(MetricName.processCPU, [:]))
        #expect(cpu > 0)
        #expect(try #require(exposition.value(MetricName.processResidentMemory, [:])) > 1_000_000)
        #expect(
            try #require(exposition.value(MetricName.processVirtualMemory, [:]))
                >= exposition.value(MetricName.processResidentMemory, [:])!)
        let open = try #require(exposition.value(MetricName.processOpenFileDescriptors, [:]))
        #expect(open >= 3)
        #expect(try #require(exposition.value(MetricName.processMaxFileDescriptors, [:])) >= open)
        let started = try #require(exposition.value(MetricName.processStartTime, [:]))
        let now = Date().timeIntervalSince1970
        #expect(started <= now + 1 && started > now - 86_400, "started \(started), now \(now)")
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

    @Test("the runbook's metric table lists exactly the exported metrics, with their types, labels and sources")
    func runbookListsMetrics() throws {
        let path = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("docs/operations.md")
        let runbook = try String(contentsOf: path, encoding: .utf8)
        let rows = runbook.split(separator: "\n").filter { $0.hasPrefix("| `notify_") || $0.hasPrefix("| `process_") }
        var documented: [String: [String]] = [:]
        for row in rows {
            let cells = row.split(separator: "|").map { $0.trimmingCharacters(in: .whitespaces) }
            documented[cells[0].trimmingCharacters(in: CharacterSet(charactersIn: "`"))] = Array(cells.dropFirst())
        }
        #expect(Set(documented.keys) == Set(MetricName.catalogue.map(\.name)))
        for family in MetricName.catalogue {
            guard let cells = documented[family.name], cells.count >= 3 else { continue }
            #expect(cells[0] == family.type.rawValue, "\(family.name): type")
            #expect(
                cells[1] == (family.labels.isEmpty ? "–" : family.labels.joined(separator: ", ")),
                "\(family.name): labels")
            #expect(cells[2] == family.source.rawValue, "\(family.name): exported by")
        }
    }
}
