import AsyncHTTPClient
import Foundation
import NotifyCore
import Testing
@testable import NotifyCLI

@Suite struct DevCommandTests {
    /// `notify dev` as a process: the demo's commands are delivered, /readyz turns ready, /metrics
    /// parses as Prometheus text with moving counters, and SIGTERM ends it within 10 seconds.
    @Test func devRunsTheDemoAndStopsOnSIGTERM() async throws {
        let dev = try NotifyProcess(["dev", "--http-listen", "127.0.0.1:0", "--inapp-listen", "127.0.0.1:0"])
        defer { dev.kill() }
        let consoleLine = try await dev.waitForLine { $0.contains("console     http://") }
        let base = try #require(consoleLine.split(separator: " ").first { $0.hasPrefix("http://") }).dropLast()
        try await dev.waitForLine { $0.contains("demo ") && $0.contains("events of") }

        // Every push the demo renders to is delivered, byte for byte the same content.
        var configuration = try CoreConfiguration.load(schemasDirectory: repositoryRoot.appendingPathComponent("Schemas").path)
        configuration.backgroundPushIntervalMilliseconds = 5_000  // notify dev's default (pipeline.backgroundPushInterval)
        let scenario = try [UInt8](Data(contentsOf: repositoryRoot.appendingPathComponent("Schemas/examples/scenarios/demo.json")))
        let pushes = try ScenarioRunner(configuration: configuration).run(scenario: scenario).commands.filter { $0.path == .push }
        #expect(!pushes.isEmpty)
        let expected = Set(pushes.map { "  delivered   \(DevLine.describe($0))" })
        let deadline = ContinuousClock.now + .seconds(30)
        while !expected.isSubset(of: Set(dev.output)), ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(200))
        }
        #expect(expected.subtracting(dev.output).isEmpty, "not delivered: \(expected.subtracting(dev.output).sorted())")

        let http = HTTPClient.shared
        func get(_ path: String) async throws -> (UInt, String) {
            let response = try await http.execute(HTTPClientRequest(url: "\(base)\(path)"), timeout: .seconds(10))
            let body = try await response.body.collect(upTo: 4 << 20)
            return (response.status.code, String(buffer: body))
        }
        #expect(try await get("/readyz").0 == 200)
        #expect(try await get("/healthz").0 == 200)
        let (status, metrics) = try await get("/metrics")
        #expect(status == 200)
        var samples: [String: Double] = [:]
        for line in metrics.split(separator: "\n") where !line.hasPrefix("#") {
            let parts = line.split(separator: " ")
            #expect(parts.count == 2, "not a Prometheus sample: \(line)")
            samples[String(parts[0])] = Double(parts[1])
        }
        let consumed = samples.filter { $0.key.hasPrefix("notify_records_consumed") }.values.reduce(0, +)
        #expect(consumed >= 27, "records consumed: \(consumed)")
        #expect(samples.contains { $0.key.hasPrefix("notify_suppressions") && $0.value > 0 })
        // The demo's sender whose identity comes late made at least one message wait.
        #expect(samples.contains { $0.key.hasPrefix("notify_identity_waits") && $0.value > 0 }, "\(samples.keys.sorted())")
        #expect(samples.contains { $0.key.hasPrefix("notify_consumer_lag") })
        #expect(samples.contains { $0.key.hasPrefix("notify_processing") && $0.key.contains("_count") && $0.value > 0 }, "\(samples.keys.sorted())")

        let (elapsed, exitStatus) = try await dev.terminate()
        #expect(elapsed < .seconds(10))
        #expect(exitStatus == 0)
    }
}
