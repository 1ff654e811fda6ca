import Foundation
import Glibc
import NotifyCore
import Testing

@testable import NotifyCLI

@Suite struct DevCommandTests {
    /// `notify dev` as a process: the demo's commands are delivered, /readyz turns ready, /metrics
    /// parses as Prometheus text with moving counters, and SIGTERM ends it within 10 seconds.
    @Test func devRunsTheDemoAndStopsOnSIGTERM() async throws {
        let dev = try NotifyProcess([
            "dev", "--broker-port", "0", "--http-listen", "127.0.0.1:0", "--inapp-listen", "127.0.0.1:0",
        ])
        defer { dev.kill() }
        let consoleLine = try await dev.waitForLine { $0.contains("console     http://") }
        let base = try #require(consoleLine.split(separator: " ").first { $0.hasPrefix("http://") }).dropLast()
        try await dev.waitForLine { $0.contains("demo ") && $0.contains("events of") }

        // Every push the demo renders to is delivered, byte for byte the same content.
        var configuration = try CoreConfiguration.load(
            schemasDirectory: repositoryRoot.appendingPathComponent("Schemas").path)
        // notify dev's default (pipeline.backgroundPushInterval)
        configuration.backgroundPushIntervalMilliseconds = 5_000
        let scenario = try [UInt8](
            Data(contentsOf: repositoryRoot.appendingPathComponent("Schemas/examples/scenarios/demo.json")))
        let pushes = try ScenarioRunner(configuration: configuration).run(scenario: scenario).commands.filter {
            $0.path == .push
        }
        #expect(!pushes.isEmpty)
        let expected = Set(pushes.map { "  delivered   \(DevLine.describe($0))" })
        let deadline = ContinuousClock.now + .seconds(30)
        while !expected.isSubset(of: Set(dev.output)), ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(200))
        }
        #expect(expected.subtracting(dev.output).isEmpty, "not delivered: \(expected.subtracting(dev.output).sorted())")
        // The late identity and the local notification nobody took (no app is connected), before its push.
        #expect(dev.output.contains("  identity    frank is “Frank Kowalski” (@frank.k)"))
        let undeliverable = try #require(
            dev.output.firstIndex {
                $0.hasPrefix("  outcome     undeliverable-local (") && $0.contains("← bob/bob-pixel by inapp")
            },
            "\(dev.output)")
        #expect(dev.output[undeliverable...].contains { $0.hasPrefix("  delivered   push → bob/bob-pixel") })

        #expect(try await httpGet(base + "/readyz").status == 200)
        #expect(try await httpGet(base + "/healthz").status == 200)
        let (status, metrics) = try await httpGet(base + "/metrics")
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
        #expect(
            samples.contains { $0.key.hasPrefix("notify_identity_waits") && $0.value > 0 }, "\(samples.keys.sorted())")
        #expect(samples.contains { $0.key.hasPrefix("notify_consumer_lag") })
        #expect(
            samples.contains { $0.key.hasPrefix("notify_processing") && $0.key.contains("_count") && $0.value > 0 },
            "\(samples.keys.sorted())")
        // The in-app gateway's outcomes are counted as the console sink's are.
        func outcomes(_ kind: String, _ outcome: String) -> Double {
            samples.filter {
                $0.key.hasPrefix("notify_sink_outcomes_total{") && $0.key.contains("kind=\"\(kind)\"")
                    && $0.key.contains("outcome=\"\(outcome)\"")
            }.values.reduce(0, +)
        }
        #expect(outcomes("inapp", "undeliverable-local") >= 1, "\(samples.keys.sorted())")
        #expect(outcomes("console", "delivered") >= Double(pushes.count))

        let (elapsed, exitStatus) = try await dev.terminate()
        #expect(elapsed < .seconds(10))
        #expect(exitStatus == 0)
    }

    /// Ctrl-C a moment after start-up began ends the process at once: no demo, no waiting for readiness.
    @Test func sigintDuringStartUpEndsAtOnce() async throws {
        let dev = try NotifyProcess([
            "dev", "--broker-port", "0", "--http-listen", "127.0.0.1:0", "--inapp-listen", "127.0.0.1:0",
        ])
        defer { dev.kill() }
        let elapsed = try #require(
            try await dev.signal(SIGINT, onLine: { $0.contains("console     http://") }), "\(dev.output)")
        #expect(elapsed < .seconds(5), "took \(elapsed)")
        #expect(!dev.output.contains { $0.contains("demo ") && $0.contains("events of") }, "\(dev.output)")
    }

    /// A port that is taken (a second notify dev) is named, with the flag that changes it.
    @Test func takenPortsAreNamedWithTheirFlags() async throws {
        let held = try HeldPort()
        defer { held.close() }
        let broker = try NotifyProcess([
            "dev", "--broker-port", "\(held.port)", "--http-listen", "127.0.0.1:0", "--inapp-listen", "127.0.0.1:0",
        ])
        defer { broker.kill() }
        #expect(try await broker.exitStatus() != 0)
        #expect(
            broker.output.contains {
                $0.contains("127.0.0.1:\(held.port) is in use (another notify dev, or a Kafka broker?)")
                    && $0.contains("--broker-port PORT")
            },
            "\(broker.output)")

        let http = try NotifyProcess([
            "dev", "--broker-port", "0", "--http-listen", "127.0.0.1:\(held.port)", "--inapp-listen", "127.0.0.1:0",
        ])
        defer { http.kill() }
        #expect(try await http.exitStatus() == 1)
        #expect(
            http.output.contains(
                "Error: 127.0.0.1:\(held.port) (--http-listen, the console) is in use (another notify dev?): stop that process, or pass --http-listen HOST:PORT (port 0 picks a free one)"
            ),
            "\(http.output)")

        let inapp = try NotifyProcess([
            "dev", "--broker-port", "0", "--http-listen", "127.0.0.1:0", "--inapp-listen", "127.0.0.1:\(held.port)",
        ])
        defer { inapp.kill() }
        #expect(try await inapp.exitStatus() == 1)
        #expect(
            inapp.output.contains {
                $0.contains("127.0.0.1:\(held.port) (--inapp-listen, the in-app gateway) is in use")
            }, "\(inapp.output)")
    }

    /// The bootstrap address is 127.0.0.1:9092 unless --broker-port says otherwise, the same on every run,
    /// and clients reach the broker through it.
    @Test func theBootstrapIsStable() async throws {
        #expect(try DevCommand.parse([]).brokerPort == 9092)
        let free = try HeldPort()
        free.close()
        let dev = try NotifyProcess([
            "dev", "--broker-port", "\(free.port)", "--scenario", "none", "--http-listen", "127.0.0.1:0",
            "--inapp-listen", "127.0.0.1:0",
        ])
        defer { dev.kill() }
        let bootstrap = "127.0.0.1:\(free.port)"
        #expect(
            try await dev.waitForLine { $0.hasPrefix("  bootstrap   ") }
                == "  bootstrap   \(bootstrap)   (export NOTIFY_BOOTSTRAP=\(bootstrap))")
        try await dev.waitForLine { $0.contains("ready ") }
        let inspect = try NotifyProcess(["inspect", "--bootstrap", bootstrap, "--topic", "chat.messages"])
        defer { inspect.kill() }
        #expect(try await inspect.exitStatus() == 0)
        #expect(inspect.output.contains("chat.messages: no records"), "\(inspect.output)")
        let (_, status) = try await dev.terminate()
        #expect(status == 0)
    }
}

/// A TCP port on 127.0.0.1 held open (listening) until ``close()``.
final class HeldPort: Sendable {
    let port: Int
    private let socket: Int32

    init() throws {
        let socket = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        self.socket = socket
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                Glibc.bind(socket, $0, length) == 0 && listen(socket, 1) == 0 && getsockname(socket, $0, &length) == 0
            }
        }
        guard bound else { throw ProcessFailure("cannot hold a port") }
        port = Int(UInt16(bigEndian: address.sin_port))
    }

    func close() {
        _ = Glibc.close(socket)
    }
}
