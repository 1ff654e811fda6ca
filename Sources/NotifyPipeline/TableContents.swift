import NotifyKafka

/// A table topic's records read at an assignment, handed to the tasks that own them.
struct TableContents {
    /// The records of each partition, in offset order.
    private var bySource: [[KafkaRecord]]
    /// Per partition, the records of other partitions whose key murmur2 puts there, in partition then
    /// offset order: a producer that partitions otherwise than murmur2 puts a task's keys elsewhere.
    private var misplaced: [[KafkaRecord]]

    init(partitionCount: Int32) {
        bySource = Array(repeating: [], count: Int(partitionCount))
        misplaced = Array(repeating: [], count: Int(partitionCount))
    }

    /// Adds the records read from partition `source`.
    mutating func add(_ records: [KafkaRecord], of source: Int32) {
        bySource[Int(source)] = records
        for record in records {
            guard let key = record.key else { continue }
            let owner = KafkaPartitioner.murmur2.partition(of: key, partitionCount: Int32(misplaced.count))
            if owner != source { misplaced[Int(owner)].append(record) }
        }
    }

    /// What the task of `partition` restores: every record of its partition (``PartitionTask``
    /// leaves out those it forwards) and, in partition order, its keys found in other partitions.
    func records(of partition: Int32) -> [KafkaRecord] {
        // In partition order, as if each partition were read in turn: its own where its turn comes.
        let own = bySource[Int(partition)]
        let before = misplaced[Int(partition)].filter { $0.partition < partition }
        let after = misplaced[Int(partition)].filter { $0.partition > partition }
        return before + own + after
    }
}
