import Foundation
import Logging
import NotifyBuild
import NotifyCore
import NotifyKafka
import NotifyService
import NotifyTestSupport
import Testing

/// `/metrics` of a running `notify pipeline` and `notify sink`: every family the process runs is
/// there from the start, with `# HELP` and `# TYPE`, and nothing else is.
@Suite struct MetricsScrapeTests {
    @Test func pipelineAndSinkExportEveryFamilyWithHelpAndType() async throws {
        try await EmbeddedBroker.withBroker(logger: Logger(label: "metrics-scrape-test")) { broker in
            let catalog = try TopicCatalog.load(from: repositoryRoot.appendingPathComponent("Schemas/topics.json"))
            for topic in catalog.topics {
                try await broker.createTopic(topic.name, partitions: min(topic.partitions, 2))
            }
            let out = FileManager.default.temporaryDirectory.appendingPathComponent(
                "metrics-\(UUID().uuidString).jsonl"
            ).path
            defer { try? FileManager.default.removeItem(atPath: out) }
            let common = ["--bootstrap", broker.bootstrapServers, "--http-listen", "127.0.0.1:0"]
            let sink = try NotifyProcess(["sink", "--kind", "jsonl", "--out", out] + common)
            defer { sink.kill() }
            let pipeline = try NotifyProcess(["pipeline"] + common)
            defer { pipeline.kill() }

            let sinkMetrics = try await scrapeOnceReporting(sink)
            check(sinkMetrics, exports: [.everyProcess, .sink])
            #expect(sinkMetrics.value(MetricName.retries, ["kind": "jsonl"]) == 0)
            #expect(sinkMetrics.value(MetricName.deadLetters, ["source": Topic.commands]) == 0)
            #expect(sinkMetrics.value(MetricName.sinkOutcomes, ["kind": "jsonl", "outcome": "failed"]) == 0)

            let pipelineMetrics = try await scrapeOnceReporting(pipeline)
            check(pipelineMetrics, exports: [.everyProcess, .pipeline])
            #expect(pipelineMetrics.value(MetricName.identityTimeouts, [:]) == 0)
            #expect(pipelineMetrics.value(MetricName.deadLetters, ["source": Topic.identities]) == 0)
            #expect(pipelineMetrics.value(MetricName.deadLetters, ["source": Topic.messages]) == 0)
            #expect(pipelineMetrics.value(MetricName.suppressions, ["reason": "muted"]) == 0)
            #expect(pipelineMetrics.value("notify_processing_latency_seconds_count", ["stage": "route"]) == 0)
            // Both stages' consumers report their group's figures.
            #expect(pipelineMetrics.samples(of: MetricName.kafkaAssignedPartitions).count >= 2)

            #expect(try await sink.terminate().1 == 0)
            #expect(try await pipeline.terminate().1 == 0)
        }
    }

    /// `/metrics` of `process` once it is ready and its Kafka clients have reported their statistics
    /// (every 10 s).
    private func scrapeOnceReporting(_ process: NotifyProcess) async throws -> PrometheusText {
        let base = try await process.serviceBase()
        let deadline = ContinuousClock.now + .seconds(90)
        while true {
            let ready = try? await httpGet(base + "/readyz")
            if let body = try? await httpGet(base + "/metrics"), ready?.status == 200 {
                let exposition = try PrometheusText.parse(body.text)
                if !exposition.samples(of: MetricName.kafkaBrokerRoundTrip).isEmpty { return exposition }
            }
            guard ContinuousClock.now < deadline else {
                throw ProcessFailure("\(base): not ready with Kafka statistics in 90 s")
            }
            try await Task.sleep(for: .milliseconds(500))
        }
    }

    /// The families of `sources`, and only those, each with its help text and type; every sample in a family.
    private func check(_ exposition: PrometheusText, exports sources: Set<MetricSource>) {
        let expected = MetricName.catalogue.filter { sources.contains($0.source) }
        #expect(Set(exposition.types.keys) == Set(expected.map(\.name)))
        #expect(Set(exposition.helps.keys) == Set(expected.map(\.name)))
        for family in expected {
            #expect(exposition.types[family.name] == family.type.rawValue, "\(family.name)")
            #expect(exposition.helps[family.name] == family.help, "\(family.name)")
        }
        for sample in exposition.samples {
            #expect(exposition.family(ofSample: sample.name) != nil, "\(sample.name) belongs to no declared family")
        }
        #expect(
            exposition.value(MetricName.buildInfo, ["version": NotifyBuild.version, "commit": NotifyBuild.commit]) == 1)
        #expect((exposition.value(MetricName.processResidentMemory, [:]) ?? 0) > 0)
        #expect((exposition.value(MetricName.processOpenFileDescriptors, [:]) ?? 0) > 0)
        #expect(exposition.samples(of: MetricName.kafkaBrokerRoundTrip).allSatisfy { $0.labels["broker"] == "1" })
    }
}
