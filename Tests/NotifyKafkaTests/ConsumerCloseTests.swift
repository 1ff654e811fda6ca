import NotifyKafka
import Testing

/// A consumer asked something while or after it closes answers with an error, never from a
/// released client; closed, it lets go of its hooks.
@Suite struct ConsumerCloseTests {
    @Test func callsDuringAndAfterCloseGetAnError() async throws {
        try await withEmbeddedBroker(topics: ["closing": 2]) { broker in
            let producer = try KafkaProducer(configuration: clientConfiguration(broker), logger: testLogger)
            _ = try await producer.send((0..<20).map { record("closing", key: "k\($0)", value: "\($0)") })
            await producer.close()
            // The hooks hold something (as a pipeline's hooks hold the runner that holds the consumer).
            final class Owner: Sendable {}
            var owner: Owner? = Owner()
            weak let heldByHooks = owner
            let consumer = try KafkaConsumer(
                configuration: .init(client: clientConfiguration(broker), groupId: "closing"),
                hooks: RebalanceHooks(assigned: { [owner] _ in _ = owner }), logger: testLogger)
            owner = nil
            #expect(heldByHooks != nil)
            try consumer.subscribe(["closing"])
            let records = try await collect(consumer, count: 20)
            #expect(records.count == 20)

            // Something polls the consumer (as the pipeline's tick reads its lag) while it closes:
            // it meets an error (librdkafka's own while closing, or ours once released), never a crash.
            // A millisecond apart, so the polling does not take a core from the tests running beside it.
            let polling = Task.detached { () -> (any Error) in
                while true {
                    do { _ = try consumer.lag() } catch { return error }
                    try? await Task.sleep(for: .milliseconds(1))
                }
            }
            await consumer.close()
            let stoppedWith = await polling.value
            // Closed, it lets go of its hooks and what they hold, though the consumer itself lives on.
            #expect(heldByHooks == nil)
            #expect(stoppedWith is KafkaError, "\(stoppedWith)")

            // Released now: every call is refused by the guard.
            let partition = TopicPartition(topic: "closing", partition: 0)
            let closed = "the consumer is closed"
            let calls: [() throws -> Void] = [
                { _ = try consumer.lag() }, { _ = try consumer.assignment() }, { try consumer.store([partition: 1]) },
            ]
            for call in calls {
                let error = #expect(throws: KafkaError.self) { try call() }
                #expect(error.map { "\($0)" }?.contains(closed) == true, "\(String(describing: error))")
            }
            let commitError = await #expect(throws: KafkaError.self) { try await consumer.commit([partition: 1]) }
            #expect(commitError.map { "\($0)" }?.contains(closed) == true, "\(String(describing: commitError))")
        }
    }
}
