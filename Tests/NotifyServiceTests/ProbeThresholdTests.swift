import Logging
import Testing

@testable import NotifyService

/// `/readyz` and `/healthz` against the thresholds of `probes.*`, driven by the hooks the pipeline
/// and the sinks call (cluster checks, partitions given and taken).
@Suite("Probes: a lost cluster or lost partitions make a process unready, a stuck one unhealthy")
struct ProbeThresholdTests {
    static let clusterTimeout = Duration.milliseconds(1500)

    func shell(clusterTimeout: Duration = clusterTimeout, stuckAfter: Duration = .seconds(3)) -> ServiceShell {
        ServiceShell(
            settings: testSettings(), logger: Logger(label: "test"),
            status: ServiceStatus(thresholds: ProbeThresholds(clusterTimeout: clusterTimeout, stuckAfter: stuckAfter)))
    }

    /// Reports a finished cluster check every 50 ms until cancelled.
    func checking(_ status: ServiceStatus, reachable: Bool) -> Task<Void, any Error> {
        Task {
            while !Task.isCancelled {
                status.clusterCheck(reachable: reachable)
                try await Task.sleep(for: .milliseconds(50))
            }
        }
    }

    func waitFor(_ path: String, _ status: Int, port: Int) async throws {
        let deadline = ContinuousClock.now + .seconds(10)
        while try await get(path, port: port).status != status {
            guard ContinuousClock.now < deadline else {
                Issue.record("\(path) did not answer \(status)")
                return
            }
            try await Task.sleep(for: .milliseconds(50))
        }
    }

    @Test(
        "no answer from the cluster for probes.clusterTimeout: 503 on /readyz, 200 on /healthz; back at the next answer"
    )
    func lostCluster() async throws {
        try await withRunningShell(shell()) { shell, port in
            shell.status.markReady()
            let answered = checking(shell.status, reachable: true)
            try await waitFor("/readyz", 200, port: port)
            answered.cancel()
            // Checks keep finishing, unanswered: not ready, but alive.
            let unanswered = checking(shell.status, reachable: false)
            try await waitFor("/readyz", 503, port: port)
            #expect(try await get("/readyz", port: port).body.hasPrefix("not ready: cannot reach the Kafka cluster"))
            try await Task.sleep(for: .seconds(3.5))
            #expect(try await get("/healthz", port: port).status == 200)
            unanswered.cancel()
            let again = checking(shell.status, reachable: true)
            defer { again.cancel() }
            try await waitFor("/readyz", 200, port: port)
        }
    }

    @Test(
        "partitions lost in a rebalance for probes.clusterTimeout: 503; an assignment, even of none, makes it ready again"
    )
    func lostPartitions() async throws {
        try await withRunningShell(shell()) { shell, port in
            shell.status.markReady()
            shell.status.partitionsRevoked(consumer: "stage route", remaining: 2)
            try await Task.sleep(for: Self.clusterTimeout + .milliseconds(200))
            #expect(try await get("/readyz", port: port).status == 200, "still holding partitions")
            let revoked = ContinuousClock.now
            shell.status.partitionsRevoked(consumer: "stage route", remaining: 0)
            let during = try await get("/readyz", port: port).status
            if ContinuousClock.now - revoked < Self.clusterTimeout {
                #expect(during == 200, "a rebalance is under way")
            }
            try await waitFor("/readyz", 503, port: port)
            #expect(try await get("/readyz", port: port).body.contains("stage route has held no partitions"))
            shell.status.partitionsAssigned(consumer: "stage route")
            #expect(try await get("/readyz", port: port).status == 200)
        }
    }

    @Test("no cluster check finishing for probes.stuckAfter: 503 on /healthz")
    func stuck() async throws {
        try await withRunningShell(shell()) { shell, port in
            #expect(try await get("/healthz", port: port).status == 200, "no check has run yet")
            let checkedAt = ContinuousClock.now
            shell.status.clusterCheck(reachable: true)
            let soon = try await get("/healthz", port: port).status
            if ContinuousClock.now - checkedAt < .seconds(3) { #expect(soon == 200) }
            try await waitFor("/healthz", 503, port: port)
            #expect(try await get("/healthz", port: port).body.hasPrefix("unhealthy: stuck"))
            shell.status.clusterCheck(reachable: false)
            #expect(try await get("/healthz", port: port).status == 200)
        }
    }
}
