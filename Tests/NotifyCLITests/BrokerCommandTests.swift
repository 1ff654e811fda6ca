import Foundation
import Logging
import NotifyKafka
import Testing

@Suite struct BrokerCommandTests {
    /// The first line of stdout is the bootstrap list, the topics exist, SIGTERM stops it.
    @Test func printsTheBootstrapListFirstAndServesTheTopics() async throws {
        let broker = try NotifyProcess(["broker", "--no-catalog", "--topic", "orders:3", "--topic", "audit:1"])
        defer { broker.kill() }
        let bootstrap = try await broker.waitForLine { _ in true }
        #expect(bootstrap.hasPrefix("127.0.0.1:"))
        let admin = try KafkaAdmin(
            configuration: KafkaClientConfiguration(bootstrapServers: bootstrap), logger: Logger(label: "test"))
        #expect(try await admin.metadata(of: "orders")?.partitionCount == 3)
        #expect(try await admin.metadata(of: "audit")?.partitionCount == 1)
        let (_, status) = try await broker.terminate()
        #expect(status == 0)
    }

    /// A topic without its partition count is refused before any broker starts, with the form it takes.
    @Test func refusesABadTopicWithAClearMessage() async throws {
        let broker = try NotifyProcess(["broker", "--no-catalog", "--topic", "orders"])
        defer { broker.kill() }
        #expect(try await broker.exitStatus() != 0)
        // The pipe may still hold the last of the output when the process is seen gone.
        let message = "--topic orders: expected NAME:PARTITIONS with PARTITIONS > 0, e.g. chat.messages:16."
        let deadline = ContinuousClock.now + .seconds(10)
        while !broker.output.contains(where: { $0.contains(message) }), ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(20))
        }
        let output = broker.output
        #expect(output.contains { $0.contains(message) }, "\(output)")
        #expect(!output.contains { $0.hasPrefix("127.0.0.1:") }, "no bootstrap list: no broker started")
    }
}
