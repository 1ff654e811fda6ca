import Foundation
import Logging
import NotifyCore
import NotifyKafka
import Testing

/// A `notify pipeline` asked to stop while its Kafka cluster is gone (the embedded broker's outage
/// injection): its shutdown cannot commit, so it ends when `shutdown.gracePeriod` has passed, with
/// status 1 and the reason in its log, not with the lifecycle library's crash report; and a second
/// SIGTERM ends it at once. `Scripts/test.sh` runs this suite with the other tests that take a
/// broker down.
@Suite(.serialized) struct ShutdownOutageTests {
    /// Runs `body` with a pipeline of `gracePeriod` seconds that was ready, whose broker is now down.
    func withPipelineWithoutItsCluster(
        gracePeriod: Int, _ body: (NotifyProcess) async throws -> Void
    ) async throws {
        try await EmbeddedBroker.withBroker(logger: Logger(label: "shutdown-outage-test")) { broker in
            let catalog = try TopicCatalog.load(from: repositoryRoot.appendingPathComponent("Schemas/topics.json"))
            for topic in catalog.topics { try await broker.createTopic(topic.name, partitions: topic.partitions) }
            let pipeline = try NotifyProcess([
                "pipeline", "--bootstrap", broker.bootstrapServers, "--http-listen", "127.0.0.1:0",
                "--set", "shutdown.gracePeriod=\(gracePeriod)",
            ])
            defer { pipeline.kill() }
            _ = try await pipeline.waitForLine { $0.contains("Restored route task") }
            try await broker.setBrokerDown(1)
            _ = try await pipeline.waitForLine(timeout: .seconds(30)) { $0.contains("_TRANSPORT") }
            try await body(pipeline)
        }
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
