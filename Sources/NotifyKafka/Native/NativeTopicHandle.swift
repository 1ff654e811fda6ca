/// An `rd_kafka_topic_t *` kept for the producer's lifetime.
struct NativeTopicHandle: @unchecked Sendable {
    let pointer: OpaquePointer
}
