import CRdkafka

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
