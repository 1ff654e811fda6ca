import CRdkafka

/// An `rd_kafka_t *`. librdkafka's handles are thread-safe, so passing the
/// pointer between threads is sound.
struct NativeHandle: @unchecked Sendable {
    let pointer: OpaquePointer
}

/// librdkafka's special offsets and partitions (C macros Swift does not import).
enum NativeConstants {
    static let unassignedPartition: Int32 = -1
    static let messageCopyFlag: Int32 = 0x2
}
