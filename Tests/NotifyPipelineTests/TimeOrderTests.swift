import Kafka
import Testing
@testable import NotifyPipeline

@Suite struct TimeOrderTests {
    func record(_ topic: String, _ partition: Int32, _ offset: Int64, at time: Int64) -> KafkaRecord {
        KafkaRecord(topic: topic, partition: partition, offset: offset, key: nil, value: [], timestampMilliseconds: time)
    }

    @Test func partitionsKeepOffsetOrderAndMergeByTimeWithTablesWinningTies() {
        let records = [
            record("stream", 0, 10, at: 5), record("table", 0, 3, at: 5), record("stream", 0, 11, at: 1),
            record("table", 0, 4, at: 7), record("stream", 1, 0, at: 2),
        ]
        let merged = mergedByTime(records, topicOrder: ["table", "stream"])
        // stream/0 stays 10 then 11 although 11 is older; the tie at 5 goes to the table.
        #expect(merged.map { "\($0.topic)/\($0.partition)@\($0.offset)" } == [
            "stream/1@0", "table/0@3", "stream/0@10", "stream/0@11", "table/0@4",
        ])
    }

    @Test func oneTopicPartitionComesBackAsItIs() {
        let records = [record("stream", 0, 1, at: 9), record("stream", 0, 2, at: 3)]
        #expect(mergedByTime(records, topicOrder: ["stream"]).map(\.offset) == [1, 2])
    }
}
