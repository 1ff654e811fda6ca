import CRdkafka

/// One entry of an `rd_kafka_topic_partition_list_t`, read out of the C list.
struct PartitionListEntry: Equatable {
    var partition: TopicPartition
    /// The entry's offset; negative for none or a logical offset (`RD_KAFKA_OFFSET_INVALID` when never set).
    var offset: Int64
    /// What librdkafka reported for this partition, after a call that reports per partition.
    var error: rd_kafka_resp_err_t
}

/// An `rd_kafka_topic_partition_list_t` this module owns, destroyed in `deinit`. C calls get its
/// pointer only inside ``withUnsafeMutablePointer(_:)``, so the pointer cannot outlive the list.
///
/// Lists librdkafka lends (the rebalance callback's) are not wrapped: read them with
/// ``entries(ofBorrowed:)`` or take a ``init(copying:)`` of them.
final class NativePartitionList {
    private let pointer: UnsafeMutablePointer<rd_kafka_topic_partition_list_t>

    /// A list of `offsets`, each entry's offset left unset where it is `nil`.
    init(offsets: some Sequence<(TopicPartition, Int64?)>) {
        pointer = rd_kafka_topic_partition_list_new(16)!
        for (topicPartition, offset) in offsets {
            let element = rd_kafka_topic_partition_list_add(pointer, topicPartition.topic, topicPartition.partition)!
            if let offset { element.pointee.offset = offset }
        }
    }

    /// A list of `partitions` with their offsets unset.
    convenience init(partitions: some Sequence<TopicPartition>) {
        self.init(offsets: partitions.lazy.map { ($0, Int64?.none) })
    }

    /// Takes ownership of a list librdkafka allocated for the caller to destroy (a copy it made).
    private init(adopting pointer: UnsafeMutablePointer<rd_kafka_topic_partition_list_t>) {
        self.pointer = pointer
    }

    /// A copy of a list librdkafka lends, owned by this one; nil if librdkafka cannot copy it.
    convenience init?(copying borrowed: UnsafeMutablePointer<rd_kafka_topic_partition_list_t>) {
        guard let copy = rd_kafka_topic_partition_list_copy(borrowed) else { return nil }
        self.init(adopting: copy)
    }

    deinit {
        rd_kafka_topic_partition_list_destroy(pointer)
    }

    /// The entries, in list order.
    var entries: [PartitionListEntry] { Self.entries(ofBorrowed: pointer) }

    /// Runs `body` with the C list. The pointer must not escape `body`.
    func withUnsafeMutablePointer<T>(
        _ body: (UnsafeMutablePointer<rd_kafka_topic_partition_list_t>) throws -> T
    ) rethrows -> T {
        try body(pointer)
    }

    /// The entries of a list this module does not own (one librdkafka lends to a callback),
    /// without taking ownership of it.
    static func entries(
        ofBorrowed list: UnsafeMutablePointer<rd_kafka_topic_partition_list_t>
    ) -> [PartitionListEntry] {
        (0..<Int(list.pointee.cnt)).map { index in
            let element = list.pointee.elems[index]
            return PartitionListEntry(
                partition: TopicPartition(topic: String(cString: element.topic), partition: element.partition),
                offset: element.offset, error: element.err
            )
        }
    }
}
