import NotifyKafka
import Testing

/// librdkafka's statistics reach the reporter of a producer and a consumer, read into figures.
@Suite struct StatisticsTests {
    @Test func producerAndConsumerReportTheirStatistics() async throws {
        try await withEmbeddedBroker(topics: ["measured": 2]) { broker in
            let reports = Shared<[KafkaStatistics]>([])
            var client = clientConfiguration(broker)
            client.statistics = KafkaStatisticsReporting(interval: .milliseconds(100)) { statistics in
                reports.withLock { $0.append(statistics) }
            }
            let producer = try KafkaProducer(configuration: client, logger: testLogger)
            _ = try await producer.send((0..<10).map { record("measured", key: "k\($0)", value: "\($0)") })
            let consumer = try KafkaConsumer(
                configuration: .init(client: client, groupId: "measured"), logger: testLogger)
            try consumer.subscribe(["measured"])
            #expect(try await collect(consumer, count: 10).count == 10)

            let deadline = ContinuousClock.now + .seconds(30)
            func all() -> [KafkaStatistics] { reports.withLock { $0 } }
            func assigned(_ report: KafkaStatistics) -> Bool {
                report.type == "consumer" && report.assignedPartitions == 2
            }
            func answered(_ report: KafkaStatistics) -> Bool {
                report.type == "producer" && report.brokers.contains { $0.roundTripAverage > .zero }
            }
            while ContinuousClock.now < deadline, !all().contains(where: assigned) || !all().contains(where: answered) {
                try await Task.sleep(for: .milliseconds(50))
            }
            let figures = all()
            let consumed = try #require(figures.last(where: assigned), "\(figures)")
            let produced = try #require(figures.last(where: answered), "\(figures)")
            #expect(consumed.client.hasPrefix(client.clientId + "#consumer-"))
            #expect(produced.client.hasPrefix(client.clientId + "#producer-"))
            #expect(consumed.assignedPartitions == 2)
            #expect((consumed.rebalances ?? 0) >= 1)
            #expect(produced.rebalances == nil)
            // The embedded cluster's broker, by node id; the bootstrap entry (no node id) is left out.
            #expect(!produced.brokers.isEmpty && produced.brokers.allSatisfy { $0.nodeId >= 0 }, "\(produced.brokers)")
            // Reported long after `send` returned: every record acknowledged, none queued.
            #expect(figures.last { $0.type == "producer" }?.queuedMessages == 0)
            await consumer.close()
            await producer.close()
        }
    }

    @Test func somethingElseIsNotStatistics() {
        #expect(KafkaStatistics(json: Array("{\"name\": 1}".utf8)) == nil)
        #expect(KafkaStatistics(json: Array("not json".utf8)) == nil)
    }
}
