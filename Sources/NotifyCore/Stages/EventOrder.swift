/// Where an input stands in the order a stage folds its inputs: event time (the `at` inside the
/// event, never a Kafka record timestamp), then the topic (tables before the streams they
/// annotate), then the record key, then a sub-key (a fanout record's conversation).
///
/// Events equal in all four come from one key of one topic, which every deterministic partitioner
/// puts in one partition: they keep their order of arrival (offset order live, file order in a
/// scenario). So the order depends only on the events, not on how producers partitioned them,
/// how far behind a consumer is, or which task ran first: `notify render`, `notify replay` and the
/// live pipeline fold the same inputs in the same order.
public struct EventOrder: Sendable, Hashable, Comparable {
    /// Event time in milliseconds since 1970.
    public var milliseconds: Int64
    /// The topic's place in ``topicRank``.
    public var rank: Int
    public var key: String
    public var subkey: String

    public init(milliseconds: Int64, topic: String, key: String, subkey: String = "") {
        self.milliseconds = milliseconds
        self.rank = Self.topicRank[topic] ?? Self.topicRank.count
        self.key = key
        self.subkey = subkey
    }

    /// Ties of event time go to the topic earlier here: tables (conversations, identities, devices,
    /// preferences, client state) before outcomes, reads and the streams (messages, fanout records).
    public static let topics = [
        Topic.conversations, Topic.identities, Topic.devices, Topic.preferences, Topic.clientState,
        Topic.outcomes, Topic.reads, Topic.messages, Topic.fanout,
    ]
    private static let topicRank = Dictionary(uniqueKeysWithValues: topics.enumerated().map { ($1, $0) })

    public static func < (lhs: EventOrder, rhs: EventOrder) -> Bool { lhs.compared(to: rhs) < 0 }

    /// Less than 0, 0 or more than 0 as this comes before `other`, ties with it, or comes after it:
    /// one pass over the fields where `<` and `==` together would take two.
    public func compared(to other: EventOrder) -> Int {
        if milliseconds != other.milliseconds { return milliseconds < other.milliseconds ? -1 : 1 }
        if rank != other.rank { return rank < other.rank ? -1 : 1 }
        if key != other.key { return key < other.key ? -1 : 1 }
        if subkey != other.subkey { return subkey < other.subkey ? -1 : 1 }
        return 0
    }
}

extension InputEvent {
    /// The event's place in the order the stages fold their inputs.
    public var order: EventOrder {
        switch self {
        case .fanout(let record): record.order
        default: EventOrder(milliseconds: at.milliseconds, topic: topic, key: key)
        }
    }
}

extension FanoutRecord {
    /// The record's place in stage 2's fold order: its message's time (or the time it was released at,
    /// if it was held), then its recipient and conversation.
    public var order: EventOrder {
        EventOrder(
            milliseconds: (releasedAt ?? at).milliseconds, topic: Topic.fanout, key: recipientId, subkey: conversationId
        )
    }
}
