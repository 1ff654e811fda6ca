import Kafka
import NotifyCore
import Synchronization
import Testing
@testable import NotifyPipeline

@Suite struct IdentityTableTests {
    /// The follower says where chat.identities stands without waiting for a record, so the tasks
    /// (which count its partitions as lagging until it speaks) stop waiting on a quiet topic; and a
    /// record produced later is handed over, after which it says again that all is read.
    @Test func theFollowerSaysWhereItStandsAlsoWhenNoRecordComes() async throws {
        try await withPipelineBroker(partitions: 2) { broker in
            let producer = try KafkaProducer(configuration: client(broker), logger: testLogger)
            let admin = try KafkaAdmin(configuration: client(broker), logger: testLogger)
            let deadLetters = DeadLetterWriter(
                limit: DeadLetterLimit(bytes: 100_000), producer: producer, observer: PipelineObserver(), logger: testLogger)
            let table = IdentityTable(client: client(broker), admin: admin, limits: RecordLimits(), deadLetters: deadLetters, logger: testLogger)
            let (_, positions) = try await table.load(into: FanoutStage(configuration: try testCoreConfiguration()))
            let reports = Mutex<[(records: [KafkaRecord], lagging: [Int32: Bool])]>([])
            let follower = Task {
                try await table.follow(from: positions, reportInterval: .milliseconds(50)) { records, lagging in
                    reports.withLock { $0.append((records, lagging)) }
                }
            }
            defer { follower.cancel() }
            let allRead: [Int32: Bool] = [0: false, 1: false]
            try await waitFor("the follower to say the empty topic is read") { reports.withLock { $0.last?.lagging == allRead } }

            _ = try await producer.send(try outgoingRecord(Scenario.identity("carol", "Carol", at: 0)))
            try await waitFor("the identity to be handed over, then all read") {
                reports.withLock { reports in
                    guard let handed = reports.firstIndex(where: { !$0.records.isEmpty }) else { return false }
                    return reports[handed...].contains { $0.lagging == allRead }
                }
            }
            let handed = reports.withLock { $0.flatMap(\.records) }
            #expect(handed.map(\.key) == [Array("carol".utf8)])
            follower.cancel()
            _ = await follower.result
            await producer.close()
        }
    }

    private func waitFor(_ what: String, timeout: Duration = .seconds(30), _ condition: () -> Bool) async throws {
        let deadline = ContinuousClock.now + timeout
        while !condition() {
            guard ContinuousClock.now < deadline else { throw TestTimeout(what: what) }
            try await Task.sleep(for: .milliseconds(20))
        }
    }
}
