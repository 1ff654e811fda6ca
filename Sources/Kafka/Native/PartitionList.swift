import CRdkafka

/// Builds an `rd_kafka_topic_partition_list_t`; the caller destroys it.
func makePartitionList<S: Sequence>(_ entries: S) -> UnsafeMutablePointer<rd_kafka_topic_partition_list_t>
where S.Element == (TopicPartition, Int64?) {
    let list = rd_kafka_topic_partition_list_new(16)!
    for (topicPartition, offset) in entries {
        let element = rd_kafka_topic_partition_list_add(list, topicPartition.topic, topicPartition.partition)!
        if let offset { element.pointee.offset = offset }
    }
    return list
}

/// Reads an `rd_kafka_topic_partition_list_t`.
func readPartitionList(_ list: UnsafeMutablePointer<rd_kafka_topic_partition_list_t>) -> [(TopicPartition, Int64, rd_kafka_resp_err_t)] {
    (0..<Int(list.pointee.cnt)).map { index in
        let element = list.pointee.elems[index]
        return (TopicPartition(topic: String(cString: element.topic), partition: element.partition), element.offset, element.err)
    }
}
