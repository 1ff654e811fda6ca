import AsyncHTTPClient
import Foundation
import Logging
import NotifyCore
import NotifyKafka
import Testing

/// `/readyz` and `/healthz` of a pipeline process and a sink process while their broker goes away
/// (the embedded broker's outage injection) and comes back. `Scripts/test.sh` runs this suite with
/// the other tests that take a broker down.
@Suite struct ProbeOutageTests {
    func status(_ url: String) async -> UInt? {
        guard let response = try? await HTTPClient.shared.execute(HTTPClientRequest(url: url), timeout: .seconds(5))
        else { return nil }
        _ = try? await response.body.collect(upTo: 1 << 20)
        return response.status.code
    }

    /// Waits until `url` answers `expected`; returns how long that took.
    @discardableResult
    func waitForStatus(_ url: String, _ expected: UInt, timeout: Duration) async throws -> Duration {
        let started = ContinuousClock.now
        while ContinuousClock.now - started < timeout {
            if await status(url) == expected { return ContinuousClock.now - started }
            try await Task.sleep(for: .milliseconds(200))
        }
        Issue.record(
            "\(url) did not answer \(expected) within \(timeout) (last: \(await status(url).map(String.init) ?? "no answer"))"
        )
        return timeout
    }

    @Test func readinessFailsWhileTheBrokerIsGoneAndComesBackWithIt() async throws {
        try await EmbeddedBroker.withBroker(logger: Logger(label: "probe-outage-test")) { broker in
            let catalog = try TopicCatalog.load(from: repositoryRoot.appendingPathComponent("Schemas/topics.json"))
            for topic in catalog.topics { try await broker.createTopic(topic.name, partitions: topic.partitions) }
            let out = FileManager.default.temporaryDirectory.appendingPathComponent(
                "probe-outage-\(UUID().uuidString).jsonl"
            ).path
            defer { try? FileManager.default.removeItem(atPath: out) }
            let common = [
                "--bootstrap", broker.bootstrapServers, "--http-listen", "127.0.0.1:0",
                "--set", "probes.checkInterval=0.5", "--set", "probes.clusterTimeout=3",
            ]
            let sink = try NotifyProcess(["sink", "--kind", "jsonl", "--out", out] + common)
            defer { sink.kill() }
            let pipeline = try NotifyProcess(["pipeline"] + common)
            defer { pipeline.kill() }
            let bases = [try await sink.serviceBase(), try await pipeline.serviceBase()]
            for base in bases { try await waitForStatus(base + "/readyz", 200, timeout: .seconds(90)) }

            try await broker.setBrokerDown(1)
            for base in bases {
                let took = try await waitForStatus(base + "/readyz", 503, timeout: .seconds(30))
                print("\(base)/readyz answered 503 \(took) after the broker went down")
                #expect(await status(base + "/healthz") == 200, "a lost broker does not make the process unhealthy")
            }

            try await broker.setBrokerUp(1)
            for base in bases {
                let took = try await waitForStatus(base + "/readyz", 200, timeout: .seconds(90))
                print("\(base)/readyz answered 200 again \(took) after the broker came back")
                #expect(await status(base + "/healthz") == 200)
            }
            #expect(try await sink.terminate().1 == 0)
            #expect(try await pipeline.terminate().1 == 0)
        }
    }
}
