import Foundation
import Kafka
import Logging
import Testing

@Suite struct BrokerCommandTests {
    /// The first line of stdout is the bootstrap list, the topics exist, SIGTERM stops it.
    @Test func printsTheBootstrapListFirstAndServesTheTopics() async throws {
        let broker = try NotifyProcess(["broker", "--no-catalog", "--topic", "orders:3", "--topic", "audit:1"])
        defer { broker.kill() }
        let bootstrap = try await broker.waitForLine { _ in true }
        #expect(bootstrap.hasPrefix("127.0.0.1:"))
        let admin = try KafkaAdmin(configuration: KafkaClientConfiguration(bootstrapServers: bootstrap), logger: Logger(label: "test"))
        #expect(try await admin.metadata(of: "orders")?.partitionCount == 3)
        #expect(try await admin.metadata(of: "audit")?.partitionCount == 1)
        let (_, status) = try await broker.terminate()
        #expect(status == 0)
    }

    @Test func refusesABadTopicWithAClearMessage() async throws {
        let broker = try NotifyProcess(["broker", "--no-catalog", "--topic", "orders"])
        #expect(try await broker.exitStatus() != 0)
    }
}
