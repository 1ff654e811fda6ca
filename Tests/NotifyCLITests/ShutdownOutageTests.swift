import Foundation
import Logging
import NotifyCore
import NotifyKafka
import NotifyService
import NotifyTestSupport
import Testing

/// A `notify pipeline` asked to stop while its Kafka cluster is gone (the embedded broker's outage
/// injection): its shutdown cannot commit, so it ends when `shutdown.gracePeriod` has passed, with
/// status 1 and the reason in its log, not with the lifecycle library's crash report; and a second
/// SIGTERM ends it at once. `Scripts/test.sh` runs this suite with the other tests that take a
/// broker down.
@Suite(.serialized) struct ShutdownOutageTests {
    /// How many users' devices the pipeline folds before its broker goes down.
    static let users = 24

    /// Runs `body` with a pipeline of `gracePeriod` seconds whose broker is now down, and which has
    /// work its shutdown must finish through the broker: stage 2 has folded the devices of ``users``
    /// users just before, and neither their changelog records (a quiet stage saves at its next tick)
    /// nor their offsets (the consumer's automatic commit is put off for 10 minutes) can have been
    /// committed; the revocation's save and commit wait for the broker. (With nothing to finish, a
    /// shutdown needs no broker and ends at once with status 0, as it should; with the automatic
    /// commit at its 5 s, that happened now and then.)
    func withPipelineWithoutItsCluster(
        gracePeriod: Int, _ body: (NotifyProcess) async throws -> Void
    ) async throws {
        try await EmbeddedBroker.withBroker(logger: Logger(label: "shutdown-outage-test")) { broker in
            let catalog = try TopicCatalog.load(from: repositoryRoot.appendingPathComponent("Schemas/topics.json"))
            for topic in catalog.topics { try await broker.createTopic(topic.name, partitions: topic.partitions) }
            let pipeline = try NotifyProcess([
                "pipeline", "--bootstrap", broker.bootstrapServers, "--http-listen", "127.0.0.1:0",
                "--set", "shutdown.gracePeriod=\(gracePeriod)", "-X", "auto.commit.interval.ms=600000",
            ])
            defer { pipeline.kill() }
            let base = try await pipeline.serviceBase()
            try await waitUntilReady(base)  // Devices there at its start would be restored, not folded.
            try await produceDevices(to: broker)
            try await waitUntilRouteFolded(Self.users, base)
            try await broker.setBrokerDown(1)
            _ = try await pipeline.waitForLine(timeout: .seconds(30)) { $0.contains("_TRANSPORT") }
            try await body(pipeline)
        }
    }

    /// One `devices.updated` for each of ``users`` users, as a users' producer writes them.
    func produceDevices(to broker: EmbeddedBroker) async throws {
        let producer = try KafkaProducer(
            configuration: KafkaClientConfiguration(
                bootstrapServers: broker.bootstrapServers, clientId: "shutdown-outage-test",
                properties: ["partitioner": "murmur2_random"]),
            logger: Logger(label: "shutdown-outage-test"))
        let at = EventTime(Date()).rfc3339
        for user in 0..<Self.users {
            let value =
                #"{"type":"devices.updated","id":"d-\#(user)","at":"\#(at)","userId":"user-\#(user)","devices":[]}"#
            _ = try await producer.send(
                OutgoingRecord(topic: Topic.devices, key: Array("user-\(user)".utf8), value: Array(value.utf8)))
        }
        await producer.close()
    }

    /// Waits until the pipeline serving at `base` says it is ready (/readyz).
    func waitUntilReady(_ base: String) async throws {
        let deadline = ContinuousClock.now + .seconds(60)
        while try await httpGet(base + "/readyz").status != 200 {
            guard ContinuousClock.now < deadline else { throw ProcessFailure("\(base): not ready in 60 s") }
            try await Task.sleep(for: .milliseconds(100))
        }
    }

    /// Waits until stage 2 of the pipeline serving at `base` has folded `count` records (/metrics).
    func waitUntilRouteFolded(_ count: Int, _ base: String) async throws {
        let deadline = ContinuousClock.now + .seconds(60)
        var folded = 0.0
        while ContinuousClock.now < deadline {
            let metrics = try PrometheusText.parse(try await httpGet(base + "/metrics").text)
            folded = metrics.value(MetricName.eventTimeWait + "_count", ["stage": "route"]) ?? 0
            if folded >= Double(count) { return }
            try await Task.sleep(for: .milliseconds(100))
        }
        throw ProcessFailure("stage 2 folded \(folded) of \(count) records in 60 s")
    }

    @Test func aShutdownThatCannotCommitEndsAtTheGracePeriodSayingWhy() async throws {
        try await withPipelineWithoutItsCluster(gracePeriod: 3) { pipeline in
            let (took, status) = try await pipeline.terminate(timeout: .seconds(60))
            let output = pipeline.output.joined(separator: "\n")
            #expect(status == 1, "exit status \(status) after \(took)")
            #expect(took >= .milliseconds(2_900), "exited \(took) after SIGTERM, before the grace period")
            #expect(took < .seconds(20), "exited \(took) after SIGTERM")
            #expect(output.contains("shutdown did not finish within shutdown.gracePeriod (3 s)"))
            #expect(!output.contains("Fatal error") && !output.contains("crashed"), "a crash report")
        }
    }

    @Test func aSecondSignalEndsTheShutdownAtOnce() async throws {
        try await withPipelineWithoutItsCluster(gracePeriod: 60) { pipeline in
            pipeline.send(signal: SIGTERM)
            _ = try await pipeline.waitForLine(timeout: .seconds(30)) { $0.contains("Shutting down: at most 60 s") }
            let (took, status) = try await pipeline.terminate(timeout: .seconds(30))
            #expect(status == 128 + SIGTERM, "exit status \(status) after \(took)")
            #expect(took < .seconds(10), "exited \(took) after the second SIGTERM")
            #expect(pipeline.output.contains { $0.contains("SIGTERM again during shutdown: exiting now") })
        }
    }
}
