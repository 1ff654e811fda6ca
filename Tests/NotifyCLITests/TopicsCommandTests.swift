import Foundation
import Testing

@testable import NotifyCLI

/// `notify topics create`: the replication factor it asks for, and its errors on the embedded broker,
/// which has one broker and cannot create topics through Kafka's admin API.
@Suite struct TopicsCommandTests {
    /// By default 3 replicas, or as many as the cluster has brokers if fewer; an explicit factor the
    /// brokers can hold is kept, one they cannot is refused with what to pass.
    @Test func theReplicationFactorIsOneTheClusterCanHold() throws {
        #expect(try CreateTopicsCommand.replicationFactor(requested: nil, brokers: 1) == 1)
        #expect(try CreateTopicsCommand.replicationFactor(requested: nil, brokers: 5) == 3)
        #expect(try CreateTopicsCommand.replicationFactor(requested: 2, brokers: 3) == 2)
        #expect(throws: CommandFailure.self) { try CreateTopicsCommand.replicationFactor(requested: 3, brokers: 2) }
    }

    /// A replication factor above the cluster's broker count is refused before any create request,
    /// saying why and what to pass.
    @Test func refusesMoreReplicasThanBrokersWithAClearMessage() async throws {
        let broker = try NotifyProcess(["broker", "--no-catalog"])
        defer { broker.kill() }
        let bootstrap = try await broker.waitForLine { _ in true }
        let started = ContinuousClock.now
        let create = try NotifyProcess(["topics", "create", "--bootstrap", bootstrap, "--replication-factor", "3"])
        defer { create.kill() }
        #expect(try await create.exitStatus() != 0)
        #expect(ContinuousClock.now - started < .seconds(20), "refused before a create request waits 30 s")
        try await expectOutput(
            of: create,
            "--replication-factor 3: the cluster has 1 broker, so a topic can have at most 1 replica. Pass --replication-factor 1"
        )
    }

    /// On the embedded broker the create waits for a controller that never answers: the error says
    /// so, and that the broker creates the catalog's topics itself.
    @Test func saysTheEmbeddedBrokerCannotCreateTopics() async throws {
        let broker = try NotifyProcess(["broker", "--no-catalog"])
        defer { broker.kill() }
        let bootstrap = try await broker.waitForLine { _ in true }
        let create = try NotifyProcess(["topics", "create", "--bootstrap", bootstrap])
        defer { create.kill() }
        #expect(try await create.exitStatus() != 0)
        try await expectOutput(of: create, "creates the catalog's topics itself when it starts")
    }

    /// Expects a line of `process`'s output to contain `text` (the pipe may still hold the last of
    /// the output when the process is seen gone).
    private func expectOutput(of process: NotifyProcess, _ text: String) async throws {
        let deadline = ContinuousClock.now + .seconds(10)
        while !process.output.contains(where: { $0.contains(text) }), ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(20))
        }
        #expect(process.output.contains { $0.contains(text) }, "\(process.output)")
    }
}
