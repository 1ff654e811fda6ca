import CRdkafka
import Testing

@testable import NotifyKafka

/// The owned librdkafka partition list, without a broker: what goes in comes out by name,
/// what C writes through the scoped pointer is read back, and copies own their entries.
@Suite struct NativePartitionListTests {
    let orders = TopicPartition(topic: "orders", partition: 0)
    let invoices = TopicPartition(topic: "invoices", partition: 3)
    let refunds = TopicPartition(topic: "refunds", partition: 1)

    @Test func entriesRoundTripWithTheirOffsetsInOrder() {
        let offsets: [(TopicPartition, Int64?)] = [(orders, 42), (invoices, nil), (refunds, 0)]
        let list = NativePartitionList(offsets: offsets)
        #expect(
            list.entries == [
                PartitionListEntry(partition: orders, offset: 42, error: RD_KAFKA_RESP_ERR_NO_ERROR),
                PartitionListEntry(
                    partition: invoices, offset: Int64(RD_KAFKA_OFFSET_INVALID), error: RD_KAFKA_RESP_ERR_NO_ERROR),
                PartitionListEntry(partition: refunds, offset: 0, error: RD_KAFKA_RESP_ERR_NO_ERROR),
            ])
    }

    @Test func aListOfPartitionsLeavesTheirOffsetsUnset() {
        let list = NativePartitionList(partitions: [orders, refunds])
        #expect(list.entries.map(\.partition) == [orders, refunds])
        #expect(list.entries.allSatisfy { $0.offset == Int64(RD_KAFKA_OFFSET_INVALID) })
    }

    @Test func aListBuiltEmptyHasNoEntriesAndAValidPointer() {
        let list = NativePartitionList(partitions: [])
        #expect(list.entries.isEmpty)
        #expect(list.withUnsafeMutablePointer { $0.pointee.cnt } == 0)
        let copy = list.withUnsafeMutablePointer { NativePartitionList(copying: $0) }
        #expect(copy?.entries.isEmpty == true)
    }

    @Test func entriesReadWhatACallWritesThroughThePointer() {
        let list = NativePartitionList(partitions: [orders, invoices])
        list.withUnsafeMutablePointer { pointer in
            pointer.pointee.elems[1].offset = 7
            pointer.pointee.elems[1].err = RD_KAFKA_RESP_ERR__UNKNOWN_PARTITION
        }
        #expect(list.entries[0].error == RD_KAFKA_RESP_ERR_NO_ERROR)
        #expect(
            list.entries[1]
                == PartitionListEntry(partition: invoices, offset: 7, error: RD_KAFKA_RESP_ERR__UNKNOWN_PARTITION))
    }

    @Test func aCopyOfABorrowedListOwnsItsOwnEntries() throws {
        let offsets: [(TopicPartition, Int64?)] = [(orders, 5)]
        let lent = NativePartitionList(offsets: offsets)
        let copy = try #require(lent.withUnsafeMutablePointer { NativePartitionList(copying: $0) })
        lent.withUnsafeMutablePointer { $0.pointee.elems[0].offset = 9 }
        #expect(copy.entries.map(\.offset) == [5])
        #expect(lent.withUnsafeMutablePointer { NativePartitionList.entries(ofBorrowed: $0) } == lent.entries)
        #expect(lent.entries.map(\.offset) == [9])
    }
}
