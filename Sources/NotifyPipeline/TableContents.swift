import NotifyKafka

/// A table topic's records read at an assignment, kept for the tasks being created and handed to
/// the ones that own them: only their share of the table is held, never the whole of it.
struct TableContents {
    /// The records of each partition being assigned, in offset order.
    private var own: [Int32: [KafkaRecord]] = [:]
    /// Per partition being assigned, the records of other partitions whose key murmur2 puts there, in
    /// partition then offset order: a producer that partitions otherwise than murmur2 puts a task's
    /// keys elsewhere.
    private var misplaced: [Int32: [KafkaRecord]] = [:]
    private let partitionCount: Int32

    /// Contents for the tasks of `partitions`, of a topic with `partitionCount` partitions.
    init(for partitions: [Int32], partitionCount: Int32) {
        self.partitionCount = partitionCount
        for partition in partitions {
            own[partition] = []
            misplaced[partition] = []
        }
    }

    /// Adds the records read from partition `source`, keeping those of the tasks being created.
    mutating func add(_ records: [KafkaRecord], of source: Int32) {
        if own[source] != nil { own[source] = records }
        for record in records {
            guard let key = record.key else { continue }
            let owner = KafkaPartitioner.murmur2.partition(of: key, partitionCount: partitionCount)
            if owner != source { misplaced[owner]?.append(record) }
        }
    }

    /// What the task of `partition` restores: every record of its partition (``PartitionTask``
    /// leaves out those it forwards) and, in partition order, its keys found in other partitions.
    func records(of partition: Int32) -> [KafkaRecord] {
        // In partition order, as if each partition were read in turn: its own where its turn comes.
        let others = misplaced[partition] ?? []
        return others.filter { $0.partition < partition } + (own[partition] ?? [])
            + others.filter { $0.partition > partition }
    }
}
