import CRdkafka

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
            while rd_kafka_header_get_all(nativeHeaders, index, &name, &headerValue, &size)
                == RD_KAFKA_RESP_ERR_NO_ERROR
            {
                headers.append(
                    KafkaHeader(
                        name: name.map { String(cString: $0) } ?? "",
                        value: headerValue.map { Array(UnsafeRawBufferPointer(start: $0, count: size)) }
                    ))
                index += 1
            }
        }
    }
}
