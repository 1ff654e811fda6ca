import Foundation
import NotifyKafka
import Testing

@Suite struct ConsumerGroupTests {
    /// Two members split the partitions; when one leaves, the other takes over
    /// its partitions from the committed offsets and nothing is lost.
    @Test func survivorTakesOverFromCommittedOffsets() async throws {
        try await withEmbeddedBroker(topics: ["group": 4]) { broker in
            let producer = try KafkaProducer(configuration: clientConfiguration(broker), logger: testLogger)
            let firstHalf = (0..<400).map { record("group", key: "k\($0 % 40)", value: "\($0)") }
            _ = try await producer.send(firstHalf)

            let configuration = KafkaConsumerConfiguration(
                client: clientConfiguration(broker), groupId: "split", maxBatchSize: 50)
            let assignments = Shared<[String: Set<TopicPartition>]>([:])
            func hooks(_ name: String) -> RebalanceHooks {
                RebalanceHooks(
                    assigned: { partitions in assignments.withLock { $0[name, default: []].formUnion(partitions) } },
                    revoked: { partitions in assignments.withLock { $0[name, default: []].subtract(partitions) } }
                )
            }
            let memberA = try KafkaConsumer(configuration: configuration, hooks: hooks("a"), logger: testLogger)
            let memberB = try KafkaConsumer(configuration: configuration, hooks: hooks("b"), logger: testLogger)
            try memberA.subscribe(["group"])
            try memberB.subscribe(["group"])

            // Both read, storing what they processed, until each owns two partitions and all 400 are seen.
            let seen = Shared<[String: Set<String>]>([:])
            func drain(_ consumer: KafkaConsumer, _ name: String) -> Task<Void, any Error> {
                Task {
                    for try await batch in consumer.batches {
                        var next: [TopicPartition: Int64] = [:]
                        for record in batch { next[record.topicPartition] = record.offset + 1 }
                        seen.withLock { $0[name, default: []].formUnion(batch.map(\.valueString)) }
                        try consumer.store(next)
                    }
                }
            }
            let readerA = drain(memberA, "a")
            let readerB = drain(memberB, "b")
            try await waitUntil {
                let split = assignments.withLock { $0["a", default: []].count == 2 && $0["b", default: []].count == 2 }
                let total = seen.withLock { $0.values.reduce(Set<String>()) { $0.union($1) }.count }
                return split && total == 400
            }
            #expect(assignments.withLock { $0["a"]!.isDisjoint(with: $0["b"]!) })
            // Each member's own account of its assignment (kept from the rebalances, not asked of
            // librdkafka) is what the hooks were told, and its lag covers those partitions only.
            try await waitUntil {
                let told = assignments.withLock { $0 }
                return try told["a"] == memberA.assignment() && told["b"] == memberB.assignment()
            }
            try await waitUntil { try Set(memberA.lag().keys) == memberA.assignment() }
            #expect(try Set(memberB.lag().keys).isSubset(of: memberB.assignment()))

            // A leaves (its stored offsets are committed on the way out); B takes all four.
            await memberA.close()
            _ = try await readerA.value
            try await waitUntil { assignments.withLock { $0["b", default: []].count == 4 } }
            try await waitUntil { try memberB.assignment() == assignments.withLock { $0["b"] } }
            let secondHalf = (400..<800).map { record("group", key: "k\($0 % 40)", value: "\($0)") }
            _ = try await producer.send(secondHalf)
            await producer.close()
            try await waitUntil { seen.withLock { $0["a", default: []].union($0["b", default: []]).count } == 800 }
            let all = seen.withLock { $0["a", default: []].union($0["b", default: []]) }
            #expect(all == Set((0..<800).map(String.init)))
            // B did not re-read what A had processed and committed.
            let aOnly = seen.withLock { $0["a", default: []] }
            let rereadByB = seen.withLock { $0["b", default: []].intersection(aOnly) }
            #expect(rereadByB.isEmpty, "re-read after takeover: \(rereadByB.count)")
            await memberB.close()
            _ = try await readerB.value
        }
    }
}

/// Polls `condition` every 50 ms for up to `timeout`.
func waitUntil(timeout: Duration = .seconds(40), _ condition: () throws -> Bool) async throws {
    let deadline = ContinuousClock.now + timeout
    while try !condition() {
        guard ContinuousClock.now < deadline else { throw ConditionTimeout() }
        try await Task.sleep(for: .milliseconds(50))
    }
}

struct ConditionTimeout: Error {}
