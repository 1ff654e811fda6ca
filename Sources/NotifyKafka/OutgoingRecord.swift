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
