import CRdkafka

/// A topic and one of its partitions.
public struct TopicPartition: Sendable, Hashable, CustomStringConvertible {
    public var topic: String
    public var partition: Int32

    public init(topic: String, partition: Int32) {
        self.topic = topic
        self.partition = partition
    }

    public var description: String { "\(topic)[\(partition)]" }
}

/// A record header. Kafka allows repeated names and null values.
public struct KafkaHeader: Sendable, Hashable {
    public var name: String
    public var value: [UInt8]?

    public init(name: String, value: [UInt8]?) {
        self.name = name
        self.value = value
    }

    public init(name: String, string: String) {
        self.init(name: name, value: Array(string.utf8))
    }
}

extension Array where Element == KafkaHeader {
    /// The value of the first header called `name`, as UTF-8 text.
    public func string(for name: String) -> String? {
        guard let header = first(where: { $0.name == name }), let value = header.value else { return nil }
        return String(decoding: value, as: UTF8.self)
    }
}

/// A record read from Kafka.
public struct KafkaRecord: Sendable {
    public var topic: String
    public var partition: Int32
    public var offset: Int64
    public var key: [UInt8]?
    public var value: [UInt8]
    public var headers: [KafkaHeader]
    /// The record's timestamp (create or log-append time), milliseconds since 1970.
    public var timestampMilliseconds: Int64?

    public init(
        topic: String, partition: Int32, offset: Int64, key: [UInt8]?, value: [UInt8],
        headers: [KafkaHeader] = [], timestampMilliseconds: Int64? = nil
    ) {
        self.topic = topic
        self.partition = partition
        self.offset = offset
        self.key = key
        self.value = value
        self.headers = headers
        self.timestampMilliseconds = timestampMilliseconds
    }

    /// Where this record came from.
    public var topicPartition: TopicPartition { TopicPartition(topic: topic, partition: partition) }

    /// Copies a message out of librdkafka; the caller still owns `message`.
    init(copying message: UnsafeMutablePointer<rd_kafka_message_t>, topic: String) {
        let native = message.pointee
        self.topic = topic
        partition = native.partition
        offset = native.offset
        key = native.key.map { Array(UnsafeRawBufferPointer(start: $0, count: native.key_len)) }
        value = native.payload.map { Array(UnsafeRawBufferPointer(start: $0, count: native.len)) } ?? []
        var timestampType = RD_KAFKA_TIMESTAMP_NOT_AVAILABLE
        let timestamp = rd_kafka_message_timestamp(message, &timestampType)
        timestampMilliseconds = timestampType == RD_KAFKA_TIMESTAMP_NOT_AVAILABLE ? nil : timestamp
        headers = []
        var nativeHeaders: OpaquePointer?
        if rd_kafka_message_headers(message, &nativeHeaders) == RD_KAFKA_RESP_ERR_NO_ERROR, let nativeHeaders {
            var index = 0
            var name: UnsafePointer<CChar>?
            var headerValue: UnsafeRawPointer?
            var size = 0
            while rd_kafka_header_get_all(nativeHeaders, index, &name, &headerValue, &size) == RD_KAFKA_RESP_ERR_NO_ERROR {
                headers.append(KafkaHeader(
                    name: name.map { String(cString: $0) } ?? "",
                    value: headerValue.map { Array(UnsafeRawBufferPointer(start: $0, count: size)) }
                ))
                index += 1
            }
        }
    }
}

/// A record to produce.
public struct OutgoingRecord: Sendable {
    public var topic: String
    public var key: [UInt8]?
    public var value: [UInt8]
    public var headers: [KafkaHeader]
    /// `nil`: the producer's partitioner on the key (murmur2, as the Java client does;
    /// `-X partitioner=...` picks another).
    public var partition: Int32?
    /// `nil`: the time of sending.
    public var timestampMilliseconds: Int64?

    public init(
        topic: String, key: [UInt8]?, value: [UInt8], headers: [KafkaHeader] = [],
        partition: Int32? = nil, timestampMilliseconds: Int64? = nil
    ) {
        self.topic = topic
        self.key = key
        self.value = value
        self.headers = headers
        self.partition = partition
        self.timestampMilliseconds = timestampMilliseconds
    }
}

/// Where the broker stored a produced record.
public struct DeliveryReport: Sendable, Hashable {
    public var topic: String
    public var partition: Int32
    public var offset: Int64
}

/// A position to read a partition from.
public enum KafkaOffset: Sendable, Hashable {
    /// The oldest record still kept.
    case beginning
    /// After the newest record: only what is produced from now on.
    case end
    /// The committed offset of the group, or `auto.offset.reset` without one.
    case committed
    /// This exact offset.
    case offset(Int64)

    var native: Int64 {
        switch self {
        case .beginning: Int64(RD_KAFKA_OFFSET_BEGINNING)
        case .end: Int64(RD_KAFKA_OFFSET_END)
        case .committed: Int64(RD_KAFKA_OFFSET_STORED)
        case .offset(let offset): offset
        }
    }
}

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
