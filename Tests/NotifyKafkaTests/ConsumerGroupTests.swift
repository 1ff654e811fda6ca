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

    /// A partition a rebalance gives back to a member that read it before shows, from the moment it
    /// is assigned, the records its other owner left unread. librdkafka keeps a partition's high
    /// watermark from a member's last fetch while the partition is assigned elsewhere; taken as the
    /// end, it put the records of that time behind the other owner's commit, and the partition
    /// looked read to its end until the member fetched it again: a stage-1 task taken back marked
    /// itself idle, and stage 2 folded past the messages waiting there (issue 22).
    @Test func aPartitionGivenBackShowsTheRecordsItsOtherOwnerLeft() async throws {
        try await withEmbeddedBroker(topics: ["back": 2]) { broker in
            let producer = try KafkaProducer(configuration: clientConfiguration(broker), logger: testLogger)
            func send(_ count: Int, to partition: Int32) async throws {
                _ = try await producer.send(
                    (0..<count).map {
                        OutgoingRecord(topic: "back", key: nil, value: Array("\($0)".utf8), partition: partition)
                    })
            }
            try await send(10, to: 0)
            try await send(10, to: 1)
            let configuration = KafkaConsumerConfiguration(client: clientConfiguration(broker), groupId: "back")
            // Every assignment A is given, with its lag as A's consumer says it in the rebalance, before
            // it fetches anything.
            let memberA = Shared<KafkaConsumer?>(nil)
            let givenToA = Shared<[(partitions: [TopicPartition], lag: [TopicPartition: Int64])]>([])
            let hooksA = RebalanceHooks(
                assigned: { partitions in
                    let lag = (try? memberA.withLock { $0 }?.lag()) ?? [:]
                    givenToA.withLock { $0.append((partitions, lag)) }
                },
                revoked: { _ in })
            let logA = RecordedLog()
            let consumerA = try KafkaConsumer(configuration: configuration, hooks: hooksA, logger: logA.logger)
            memberA.withLock { $0 = consumerA }
            try consumerA.subscribe(["back"])
            _ = try await collect(consumerA, count: 20)
            #expect(try consumerA.assignment().count == 2)

            // B joins and takes one partition; it reads the records written there since, and stores
            // how far it processed: five short of their end (30).
            let consumerB = try KafkaConsumer(configuration: configuration, logger: testLogger)
            try consumerB.subscribe(["back"])
            let draining = Task { while true { _ = try await collect(consumerA, count: 1, timeout: .seconds(60)) } }
            try await waitUntil { try consumerB.assignment().count == 1 }
            let moved = try #require(try consumerB.assignment().first)
            try await send(20, to: moved.partition)
            var end: Int64 = -1
            while end < 29 {
                for record in try await collect(consumerB, count: 1) where record.topicPartition == moved {
                    end = max(end, record.offset)
                }
            }
            try consumerB.store([moved: 25])
            await consumerB.close()

            // The partition comes back to A: 5 records wait beyond B's commit.
            try await waitUntil { givenToA.withLock { $0 }.filter { $0.partitions.contains(moved) }.count == 2 }
            draining.cancel()
            let givenBack = try #require(givenToA.withLock { $0 }.last { $0.partitions.contains(moved) })
            #expect(givenBack.lag[moved] == 5, "lag of \(moved) when given back: \(givenBack.lag)")
            // Its log says where the partition resumes and where it ends.
            #expect(
                logA.messages.contains {
                    $0.hasPrefix("Assigned partitions resume:") && $0.contains("\(moved) at 25 of 30")
                },
                "\(logA.messages.filter { $0.hasPrefix("Assigned partitions resume:") })")
            await producer.close()
            await consumerA.close()
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
