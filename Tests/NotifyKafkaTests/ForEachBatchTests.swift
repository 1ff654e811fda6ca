import NotifyKafka
import Testing

/// `forEachBatch` leaves nothing of the consumer behind: by the time it returns or rethrows, the
/// consumer has closed, and closing committed what the body stored.
@Suite struct ForEachBatchTests {
    struct Stop: Error {}

    @Test(arguments: [true, false])
    func closesBeforeItReturns(cancelled: Bool) async throws {
        try await withEmbeddedBroker(topics: ["each": 2]) { broker in
            let producer = try KafkaProducer(configuration: clientConfiguration(broker), logger: testLogger)
            _ = try await producer.send((0..<100).map { record("each", key: "k\($0 % 10)", value: "\($0)") })
            await producer.close()
            let group = "each-\(cancelled)"
            let consumer = try KafkaConsumer(
                configuration: .init(client: clientConfiguration(broker), groupId: group), logger: testLogger)
            try consumer.subscribe(["each"])
            let stored = Shared<[TopicPartition: Int64]>([:])
            let following = Task {
                try await consumer.forEachBatch { batch in
                    var next: [TopicPartition: Int64] = [:]
                    for record in batch { next[record.topicPartition] = record.offset + 1 }
                    try consumer.store(next)
                    let total = stored.withLock { stored in
                        stored.merge(next) { max($0, $1) }
                        return stored.values.reduce(0, +)
                    }
                    if total >= 100, !cancelled { throw Stop() }
                }
            }
            try await waitUntil { stored.withLock { $0.values.reduce(0, +) } >= 100 }
            if cancelled { following.cancel() }
            let outcome = await following.result
            if cancelled {
                // Cancellation ends the batches: a return, or the CancellationError of the wait it interrupted.
                #expect(throws: Never.self) {
                    do { try outcome.get() } catch is CancellationError {}
                }
            } else {
                #expect(throws: Stop.self) { try outcome.get() }
            }
            // Nothing here commits, and the automatic commit (every 5 s) comes later than this:
            // what was stored is committed by the close inside forEachBatch.
            let reader = try KafkaConsumer(
                configuration: .init(client: clientConfiguration(broker), groupId: group), logger: testLogger)
            let committed = try await reader.committed(Array(stored.withLock { $0.keys }))
            await reader.close()
            #expect(committed.mapValues { $0 ?? -1 } == stored.withLock { $0 })
        }
    }
}

/// `lag()` counts the records fetched and waiting to be handed to `forEachBatch` as well as those
/// still in Kafka: a reader that orders its inputs by it must not take a partition whose records
/// wait in the consumer for one read to its end.
@Suite struct LagTests {
    @Test func countsRecordsFetchedButNotYetHandedOut() async throws {
        let total: Int64 = 20_000
        try await withEmbeddedBroker(topics: ["lagging": 1]) { broker in
            let producer = try KafkaProducer(configuration: clientConfiguration(broker), logger: testLogger)
            _ = try await producer.send((0..<total).map { record("lagging", key: "k", value: "\($0)") })
            await producer.close()
            let consumer = try KafkaConsumer(
                configuration: .init(client: clientConfiguration(broker), groupId: "lag"), logger: testLogger)
            try consumer.subscribe(["lagging"])
            let partition = TopicPartition(topic: "lagging", partition: 0)
            let seen = Shared<(handedOut: Int64, lag: Int64)?>(nil)
            struct Seen: Error {}
            await #expect(throws: Seen.self) {
                try await consumer.forEachBatch { batch in
                    // Time for the poll thread to fetch ahead and fill the hand-off.
                    try await Task.sleep(for: .milliseconds(500))
                    let lag = try consumer.lag()[partition] ?? -1
                    seen.withLock { $0 = (batch.last!.offset + 1, lag) }
                    throw Seen()
                }
            }
            let (handedOut, lag) = try #require(seen.withLock { $0 })
            #expect(handedOut < total, "the first batch held every record: nothing to wait in the hand-off")
            #expect(lag == total - handedOut)
        }
    }

    /// A consumer assigned exact offsets knows its lag once the fetcher has seen the partitions'
    /// ends, before any record comes (a follower of a quiet topic says it is read to its end).
    @Test func isKnownForAnAssignedPartitionThatBringsNothing() async throws {
        try await withEmbeddedBroker(topics: ["quiet": 1, "behind": 1]) { broker in
            let producer = try KafkaProducer(configuration: clientConfiguration(broker), logger: testLogger)
            _ = try await producer.send((0..<3).map { record("behind", key: "k", value: "\($0)") })
            await producer.close()
            let consumer = try KafkaConsumer(
                configuration: .init(client: clientConfiguration(broker), groupId: "assigned"), logger: testLogger)
            let quiet = TopicPartition(topic: "quiet", partition: 0)
            let behind = TopicPartition(topic: "behind", partition: 0)
            try consumer.assign([quiet: .offset(0), behind: .offset(1)])
            let deadline = ContinuousClock.now + .seconds(20)
            var lag = try consumer.lag()
            while lag.count < 2 && ContinuousClock.now < deadline {
                try await Task.sleep(for: .milliseconds(20))
                lag = try consumer.lag()
            }
            await consumer.close()
            #expect(lag[quiet] == 0)
            // Known too; its figure may be low for the moment the poll thread holds records it took
            // from librdkafka and has not handed over yet.
            #expect(lag[behind] != nil)
        }
    }
}
