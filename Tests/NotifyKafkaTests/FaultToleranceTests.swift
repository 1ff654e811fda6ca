import Foundation
import NotifyKafka
import Testing

@Suite struct FaultToleranceTests {
    @Test func producerRidesOutRequestErrorsAndABrokerOutage() async throws {
        try await withEmbeddedBroker(topics: ["faults": 2]) { broker in
            let producer = try KafkaProducer(configuration: clientConfiguration(broker), logger: testLogger)
            _ = try await producer.send(record("faults", key: "warm-up", value: "-1"))

            // Retriable errors on the next produce requests: librdkafka retries, idempotence keeps order and uniqueness.
            broker.pushRequestErrors(
                apiKey: KafkaAPIKey.produce,
                errors: [
                    KafkaErrorCode.notEnoughReplicas, KafkaErrorCode.requestTimedOut, KafkaErrorCode.notEnoughReplicas,
                ])
            let first = try await producer.send((0..<100).map { record("faults", key: "k\($0 % 5)", value: "\($0)") })
            #expect(first.count == 100)

            // The broker goes away while records are being sent, then comes back.
            try await broker.setBrokerDown(1)
            let sending = Task {
                try await producer.send((100..<300).map { record("faults", key: "k\($0 % 5)", value: "\($0)") })
            }
            try await Task.sleep(for: .seconds(2))
            try await broker.setBrokerUp(1)
            let second = try await sending.value
            #expect(second.count == 200)
            await producer.close()

            let consumer = try KafkaConsumer(
                configuration: .init(client: clientConfiguration(broker), groupId: "faults"), logger: testLogger)
            try consumer.subscribe(["faults"])
            let received = try await collect(consumer, count: 301)
            await consumer.close()
            let values = received.map(\.valueString)
            #expect(values.count == 301, "every record exactly once")
            #expect(Set(values) == Set((-1..<300).map(String.init)))
            for key in (0..<5).map({ "k\($0)" }) {
                let ordered = received.filter { $0.keyString == key }.map { Int($0.valueString)! }
                #expect(ordered == ordered.sorted())
            }
        }
    }

    /// An injected round-trip time holds back every answer of the broker, so a send is
    /// acknowledged no sooner than that: a lower bound, which a slow machine cannot break.
    @Test func roundTripTimeHoldsBackTheBrokersAnswers() async throws {
        try await withEmbeddedBroker(topics: ["slow": 1]) { broker in
            let producer = try KafkaProducer(configuration: clientConfiguration(broker), logger: testLogger)
            _ = try await producer.send(record("slow", key: "warm-up", value: "0"))

            try await broker.setRoundTripTime(broker: 1, milliseconds: 400)
            let start = ContinuousClock.now
            let delivered = try await producer.send(record("slow", key: "delayed", value: "1"))
            #expect(ContinuousClock.now - start >= .milliseconds(400))
            #expect(delivered.partition == 0)
            await producer.close()
        }
    }
}
