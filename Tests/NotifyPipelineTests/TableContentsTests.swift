import NotifyKafka
import Testing

@testable import NotifyPipeline

@Suite struct TableContentsTests {
    /// A key murmur2 puts in `partition` of `count`.
    static func key(ownedBy partition: Int32, of count: Int32, _ tag: String) -> [UInt8] {
        var index = 0
        while true {
            let key = Array("\(tag)-\(index)".utf8)
            if KafkaPartitioner.murmur2.partition(of: key, partitionCount: count) == partition { return key }
            index += 1
        }
    }

    /// Each task restores what reading every partition of the table for it alone gave: every record
    /// of its own partition, and its keys from the others, in partition then offset order, whatever
    /// partitioner put them where they are. Records without a key stay with their partition only, and
    /// nothing is kept for partitions not being assigned.
    @Test func eachTaskGetsItsPartitionAndItsKeysFromTheOthers() {
        let count: Int32 = 4
        var read: [[KafkaRecord]] = []
        for source in 0..<count {
            // Per partition: keys of every owner (as a CRC32 or FNV-1a producer would place them), and one without a key.
            var records: [KafkaRecord] = []
            for owner in 0..<count {
                records.append(
                    KafkaRecord(
                        topic: "t", partition: source, offset: Int64(records.count),
                        key: Self.key(ownedBy: owner, of: count, "\(source)"), value: Array("\(source)".utf8)))
            }
            records.append(
                KafkaRecord(topic: "t", partition: source, offset: Int64(records.count), key: nil, value: []))
            read.append(records)
        }
        // Kept for the tasks being created only (here 1 and 3), as an instance that gets some of the partitions.
        let assigned: [Int32] = [1, 3]
        var contents = TableContents(for: assigned, partitionCount: count)
        for source in 0..<count { contents.add(read[Int(source)], of: source) }

        for partition in assigned {
            // What each task read for itself, partition by partition, before the tables were shared.
            let expected = (0..<count).flatMap { source in
                source == partition
                    ? read[Int(source)]
                    : read[Int(source)].filter { record in
                        record.key.map {
                            KafkaPartitioner.murmur2.partition(of: $0, partitionCount: count) == partition
                        }
                            ?? false
                    }
            }
            let got = contents.records(of: partition)
            #expect(got.map { [$0.partition, Int32($0.offset)] } == expected.map { [$0.partition, Int32($0.offset)] })
            // Its own partition whole, and one record of each other partition.
            #expect(got.count == read[Int(partition)].count + Int(count) - 1)
        }
        #expect(contents.records(of: 0).isEmpty && contents.records(of: 2).isEmpty)
    }
}
