import CRdkafka

/// The partitioners Kafka clients use by default, as librdkafka implements them: which partition a
/// key goes to in a topic of `partitionCount` partitions.
public enum KafkaPartitioner: String, Sendable, CaseIterable {
    /// The Java client's (and Kafka Streams'): murmur2 of the key, positive, modulo the count.
    /// This project's producers use it (`murmur2_random`), and it decides which task owns a key.
    case murmur2
    /// librdkafka's default (`consistent_random`: kcat, confluent-kafka for Python, Go and .NET): CRC32.
    case crc32
    /// Go's sarama default: FNV-1a.
    case fnv1a

    /// The partition of `key`.
    public func partition(of key: [UInt8], partitionCount: Int32) -> Int32 {
        precondition(partitionCount > 0, "a topic has at least one partition")
        return key.withUnsafeBytes { bytes in
            switch self {
            case .murmur2:
                rd_kafka_msg_partitioner_murmur2(nil, bytes.baseAddress, bytes.count, partitionCount, nil, nil)
            case .crc32:
                rd_kafka_msg_partitioner_consistent(nil, bytes.baseAddress, bytes.count, partitionCount, nil, nil)
            case .fnv1a: rd_kafka_msg_partitioner_fnv1a(nil, bytes.baseAddress, bytes.count, partitionCount, nil, nil)
            }
        }
    }

    /// Which of the known partitioners would have put `key` in `partition`, murmur2 first.
    public static func candidates(for key: [UInt8], partition: Int32, partitionCount: Int32) -> [KafkaPartitioner] {
        allCases.filter { $0.partition(of: key, partitionCount: partitionCount) == partition }
    }

    /// How the partitioner is known to users.
    public var description: String {
        switch self {
        case .murmur2: "murmur2 (the Java client's default; librdkafka's partitioner=murmur2_random)"
        case .crc32: "CRC32 (librdkafka's default consistent_random: kcat, confluent-kafka for Python, Go and .NET)"
        case .fnv1a: "FNV-1a (Go's sarama default; librdkafka's partitioner=fnv1a_random)"
        }
    }
}
