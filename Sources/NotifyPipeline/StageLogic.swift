import NotifyCore
import NotifyKafka
import NotifyRecords

/// One of the two stages as the Kafka shell sees it: the topics that feed it,
/// how an event becomes an input of its fold, and how its state goes to and
/// comes back from its changelog. The fold itself is the core's.
protocol StageLogic: Sendable {
    associatedtype State: Sendable
    associatedtype Input: Sendable

    /// `fanout` or `route`.
    var name: StageName { get }
    /// The co-partitioned input topics (events are folded in ``EventOrder``, whatever their topic).
    var inputTopics: [String] { get }
    /// The inputs that users' producers write: each record's partition is checked against murmur2 of
    /// its key, and a record elsewhere is forwarded to ``repartitionTopic`` (see ``PartitionTask``).
    var externalTopics: [String] { get }
    /// Where records of ``externalTopics`` that are not in their key's partition go, to the partition
    /// (and so the task) that owns the key; one of ``inputTopics``.
    var repartitionTopic: String { get }
    /// The compacted topic the state of each key is written to.
    var changelogTopic: String { get }
    /// Compacted input topics read up to their current end when a task is assigned, before it
    /// processes a record (a message must not arrive before the conversation it belongs to).
    var tableTopics: [String] { get }
    /// The inputs whose progress makes this stage's progress marks (see ``ProgressMark``): the ones
    /// its output records come from. Empty: the stage writes no marks.
    var markedInputs: [String] { get }
    /// The topic the stage writes its output records to (nil: commands only).
    var outputTopic: String? { get }
    /// Whether the fold may refuse an input (``StageStep/rejection``), whose record then goes to the
    /// dead-letter topic, value and all; a stage whose fold never does lets its records' values go
    /// once they are decoded.
    var foldMayReject: Bool { get }
    /// The earliest event time at which an input the state holds back (a message waiting for its
    /// sender) can be released, and so the earliest time of a record it can still make.
    func earliestRelease(_ state: State) -> EventTime?
    /// A task's state before anything is restored into it.
    func initialState() -> State
    /// The input of this stage an event is, or nil if the stage does not take it.
    func input(from event: InputEvent) -> Input?
    /// The input that advances time to `time`.
    func clock(_ time: EventTime) -> Input
    /// Runs the core's fold and turns what it made into records.
    func fold(_ state: inout State, _ input: Input) -> StageStep
    /// The latest event time the state has seen.
    func now(_ state: State) -> EventTime?
    /// The changelog value of `key` (nil: no entry).
    func snapshot(_ state: State, key: String) -> [UInt8]?
    /// The ids of the last events applied to `key`, oldest first (kept in its changelog record).
    func recentEventIds(_ state: State, key: String) -> [String]
    /// Puts a changelog value back, with the ids of the last events applied to the key.
    func restore(_ state: inout State, key: String, value: [UInt8]?, recentEventIds: [String]) throws
    /// The id under which an event may wait in the state (a held message), if it can.
    func waitingId(of event: InputEvent) -> String?
    /// The ids of the events still waiting in `key`'s entry.
    func waiting(in state: State, key: String) -> [String]
}

/// The two stages of the pipeline.
public enum StageName: String, Sendable, CaseIterable {
    /// Stage 1: messages to one record per recipient.
    case fanout
    /// Stage 2: recipients to one command per device.
    case route

    /// The name of the span of one fold (see ``RecordTracing``).
    public var foldSpanName: String {
        switch self {
        case .fanout: "fanout fold"
        case .route: "route fold"
        }
    }

    /// Every topic the stage reads, each a source of dead letters: its inputs, and for the fanout
    /// stage `chat.identities`, which it reads as a table.
    public var topicsRead: [String] {
        switch self {
        case .fanout: FanoutStageLogic.inputTopics + [Topic.identities]
        case .route: RouteStageLogic.inputTopics
        }
    }
}

/// What one fold made, as the shell needs it.
struct StageStep: Sendable {
    var outputs: [OutgoingRecord] = []
    var commands: [NotificationCommand] = []
    var decisions: [Decision] = []
    var rejection: String?
    var touchedKeys: Set<String> = []
    /// Messages that went out without their sender's identity (one per message, not per recipient).
    var unresolvedIdentities = 0
}

/// Stage 1 on Kafka: chat.messages and chat.conversations, co-partitioned,
/// plus chat.identities fed to every task.
struct FanoutStageLogic: StageLogic {
    let stage: FanoutStage
    let identities: FanoutState

    var name: StageName { .fanout }
    var inputTopics: [String] { Self.inputTopics }
    static let inputTopics = [Topic.conversations, Topic.messages, Topic.fanoutRepartition]
    var externalTopics: [String] { Self.externalTopics }
    private static let externalTopics = [Topic.conversations, Topic.messages]
    var repartitionTopic: String { Topic.fanoutRepartition }
    var changelogTopic: String { Topic.fanoutChangelog }
    /// Its records come from messages (some forwarded from other partitions).
    var markedInputs: [String] { Self.markedInputs }
    private static let markedInputs = [Topic.messages, Topic.fanoutRepartition]
    var outputTopic: String? { Topic.fanout }
    /// A message of a conversation never seen is refused.
    var foldMayReject: Bool { true }
    var tableTopics: [String] { Self.tableTopics }
    private static let tableTopics = [Topic.conversations]

    func initialState() -> FanoutState { identities }

    func input(from event: InputEvent) -> FanoutInput? { event.fanoutInput }

    func clock(_ time: EventTime) -> FanoutInput { .clock(time) }

    func fold(_ state: inout FanoutState, _ input: FanoutInput) -> StageStep {
        let output = stage.fold(&state, input)
        return StageStep(
            outputs: output.records.map {
                OutgoingRecord(
                    topic: Topic.fanout, key: Array($0.key.utf8), value: CoreJSON.encode($0),
                    timestampMilliseconds: $0.at.milliseconds)
            },
            decisions: output.decisions, rejection: output.rejection, touchedKeys: output.touchedKeys,
            unresolvedIdentities: Set(output.records.filter { !$0.content.identityResolved }.map(\.messageId)).count)
    }

    func now(_ state: FanoutState) -> EventTime? { state.now }

    func earliestRelease(_ state: FanoutState) -> EventTime? {
        state.earliestRelease(waitMilliseconds: stage.configuration.identityWaitMilliseconds)
    }

    func snapshot(_ state: FanoutState, key: String) -> [UInt8]? { state.snapshot(key) }

    func recentEventIds(_ state: FanoutState, key: String) -> [String] { state.recentEventIds(key) }

    func restore(_ state: inout FanoutState, key: String, value: [UInt8]?, recentEventIds: [String]) throws {
        try state.restore(key, value, recentEventIds: recentEventIds)
    }

    func waitingId(of event: InputEvent) -> String? {
        if case .message(let message) = event { return message.messageId }
        return nil
    }

    func waiting(in state: FanoutState, key: String) -> [String] {
        state.entries[key]?.held.map(\.messageId) ?? []
    }
}

/// Stage 2 on Kafka: notify.fanout and the user tables, all keyed by user id.
struct RouteStageLogic: StageLogic {
    let stage: RouteStage
    var markedInputs: [String] { [] }
    var outputTopic: String? { nil }
    var foldMayReject: Bool { false }

    func earliestRelease(_ state: RouteState) -> EventTime? { nil }

    var name: StageName { .route }
    var inputTopics: [String] { Self.inputTopics }
    static let inputTopics = [
        Topic.devices, Topic.preferences, Topic.clientState, Topic.outcomes, Topic.reads, Topic.fanout,
        Topic.routeRepartition,
    ]
    var externalTopics: [String] { Self.externalTopics }
    private static let externalTopics = [Topic.devices, Topic.preferences, Topic.clientState, Topic.reads]
    var repartitionTopic: String { Topic.routeRepartition }
    var changelogTopic: String { Topic.routeChangelog }
    var tableTopics: [String] { Self.tableTopics }
    private static let tableTopics = [Topic.devices, Topic.preferences, Topic.clientState]

    func initialState() -> RouteState { RouteState() }

    func input(from event: InputEvent) -> RouteInput? { event.routeInput }

    func clock(_ time: EventTime) -> RouteInput { .clock(time) }

    func fold(_ state: inout RouteState, _ input: RouteInput) -> StageStep {
        let output = stage.fold(&state, input)
        return StageStep(
            outputs: output.commands.map { $0.record(topic: Topic.commands) },
            commands: output.commands, decisions: output.decisions, touchedKeys: output.touchedKeys)
    }

    func now(_ state: RouteState) -> EventTime? { state.now }

    func snapshot(_ state: RouteState, key: String) -> [UInt8]? { state.snapshot(key) }

    func recentEventIds(_ state: RouteState, key: String) -> [String] { state.recentEventIds(key) }

    func restore(_ state: inout RouteState, key: String, value: [UInt8]?, recentEventIds: [String]) throws {
        try state.restore(key, value, recentEventIds: recentEventIds)
    }

    func waitingId(of event: InputEvent) -> String? { nil }

    func waiting(in state: RouteState, key: String) -> [String] { [] }
}

extension NotificationCommand {
    /// The command as a record of `topic`: keyed by user id, timestamped with its event time.
    func record(topic: String) -> OutgoingRecord {
        OutgoingRecord(
            topic: topic, key: Array(recipient.userId.utf8), value: CoreJSON.encode(self),
            timestampMilliseconds: EventTime(rfc3339: at)?.milliseconds)
    }
}
