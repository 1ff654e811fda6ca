import Foundation

/// An input of stage 1 ("fanout").
public enum FanoutInput: Sendable {
    case message(MessageReceived)
    case conversation(ConversationUpdated)
    case identityUpdated(IdentityUpdated)
    case identityDeleted(IdentityDeleted)
    /// Time has advanced to this instant (wall-clock bound, or the end of a
    /// scenario): releases identity waits that are over.
    case clock(EventTime)
    /// No more input: release everything held.
    case endOfInput
}

extension FanoutInput {
    /// The event time the input brings (none for `.endOfInput`).
    var time: EventTime? {
        switch self {
        case .message(let event): event.at
        case .conversation(let event): event.at
        case .identityUpdated(let event): event.at
        case .identityDeleted(let event): event.at
        case .clock(let time): time
        case .endOfInput: nil
        }
    }
}

/// What stage 1 made of one input.
public struct FanoutOutput: Sendable {
    /// One record per recipient for `notify.fanout` (key `recipientId`), in order.
    public var records: [FanoutRecord] = []
    /// Deliveries not made (own message).
    public var decisions: [Decision] = []
    /// Why the input was refused (the shell sends it to the DLQ with this reason).
    public var rejection: String?
    /// Conversation ids whose ``FanoutState/entries`` changed, for the changelog.
    public var touchedKeys: Set<String> = []
    /// The input was an event already applied (same id, same key): nothing was done.
    public var duplicate = false

    public init() {}
}

/// The per-conversation state of stage 1, written to `notify.fanout-changelog`
/// (key: conversation id).
public struct ConversationEntry: Sendable, Hashable, Codable {
    /// The latest `conversation.updated`.
    public var conversation: ConversationUpdated?
    /// Messages held in order: the first waits for its sender's identity,
    /// the others wait behind it (rule 1).
    public var held: [MessageReceived]
    /// The event time of the latest message fanned out: one older than it that goes out after it
    /// came late (see ``FanoutRecord/late``).
    public var latestAt: EventTime?

    public init(conversation: ConversationUpdated? = nil, held: [MessageReceived] = [], latestAt: EventTime? = nil) {
        self.conversation = conversation
        self.held = held
        self.latestAt = latestAt
    }
}

/// The state of one stage-1 task: the conversations of its partition and the
/// identity directory (a table every task reads in full; not in the changelog).
public struct FanoutState: Sendable {
    /// What a user id is known as: the sender as renderings show it (built
    /// once per identity update, not once per message), or deleted.
    enum DirectoryEntry: Sendable {
        case known(SenderIdentity)
        case deleted
    }

    /// Per-conversation state, the part that goes to the changelog.
    public private(set) var entries: [String: ConversationEntry] = [:]
    var directory: [String: DirectoryEntry] = [:]
    /// Conversations with held messages.
    private(set) var waiting: Set<String> = []
    /// Conversation id → the ids of its last messages applied (see ``RecentEventIds``).
    var recent: [String: RecentEventIds] = [:]
    /// The latest event time seen.
    public private(set) var now: EventTime?

    public init() {}

    /// The earliest event time at which a held message can be released: the end of the wait of the
    /// earliest message waiting for its sender (its identity may come sooner, but not before now).
    public func earliestRelease(waitMilliseconds: Int64) -> EventTime? {
        waiting.compactMap { entries[$0]?.held.first?.at.adding(milliseconds: waitMilliseconds + 1) }.min()
    }

    /// The number of identities in the directory.
    public var identityCount: Int { directory.count }

    /// The changelog value of `key`: `nil` when the entry is gone (a tombstone).
    public func snapshot(_ key: String) -> [UInt8]? {
        guard let entry = entries[key] else { return nil }
        return CoreJSON.encode(entry)
    }

    /// The ids of the last messages applied to conversation `key`, oldest first, for its changelog record.
    public func recentEventIds(_ key: String) -> [String] { recent[key]?.ids ?? [] }

    /// Restores an entry from its changelog value (`nil`: a tombstone) and the ids of the last
    /// messages applied to it.
    public mutating func restore(_ key: String, _ value: [UInt8]?, recentEventIds: [String] = []) throws {
        recent[key] = recentEventIds.isEmpty ? nil : RecentEventIds(recentEventIds)
        guard let value else {
            entries[key] = nil
            waiting.remove(key)
            return
        }
        let entry = try ConversationEntry(changelog: value)
        setEntry(key, entry)
    }

    mutating func setEntry(_ key: String, _ entry: ConversationEntry) {
        entries[key] = entry
        if entry.held.isEmpty { waiting.remove(key) } else { waiting.insert(key) }
    }

    /// Sets the ``ConversationEntry/latestAt`` of `key`'s entry in place: its held messages, and so
    /// ``waiting``, stay as they are (a message that goes out at once, the common case).
    mutating func setLatestAt(_ time: EventTime?, of key: String) {
        guard let index = entries.index(forKey: key) else { return }
        entries.values[index].latestAt = time
    }

    mutating func advance(to time: EventTime) {
        if now.map({ time > $0 }) ?? true { now = time }
    }
}

extension ConversationEntry: JSONRepresentable {
    public var jsonValue: JSONValue {
        var object = JSONObjectBuilder(capacity: 3)
        object["conversation"] = conversation?.jsonValue
        object["held"] = .array(held.map(\.jsonValue))
        object["latestAt"] = latestAt.map { .string($0.rfc3339) }
        return object.value
    }
}

/// Stage 1: decides who hears about each message (rules 1, 2, 9) and builds
/// the content once per message; everything per device is stage 2's.
public struct FanoutStage: Sendable {
    public let configuration: CoreConfiguration
    private let builder: ContentBuilder

    public init(configuration: CoreConfiguration) {
        self.configuration = configuration
        self.builder = ContentBuilder(texts: configuration.texts)
    }

    /// Folds one input into the state.
    ///
    /// Time is event time (rule 9): a held message whose wait ended before the input's time is
    /// released, without what the input brings, before the input is applied. So an identity that
    /// comes after the wait, with nothing between, finds its message gone with the fallback,
    /// exactly as when a later event or the clock had released it first.
    public func fold(_ state: inout FanoutState, _ input: FanoutInput) -> FanoutOutput {
        var output = FanoutOutput()
        if let time = input.time {
            state.advance(to: time)
            releaseWaiting(endOfInput: false, &state, &output)
        }
        switch input {
        case .message(let message):
            // The conversation looked up and the id hashed once, for the check and the note
            // (`receive` leaves `recent` as it is, so the index stays valid).
            let hash = message.id.hashValue
            let known = state.recent.index(forKey: message.conversationId)
            if let known, state.recent.values[known].contains(message.id, hash: hash) {
                output.duplicate = true
                return output  // The same event again (an at-least-once producer's duplicate).
            }
            receive(message, &state, &output)
            if output.rejection == nil {
                if let known {
                    state.recent.values[known].insert(message.id, hash: hash)
                } else {
                    state.recent[message.conversationId] = RecentEventIds([message.id])
                }
            }
        case .conversation(let update):
            var entry = state.entries[update.conversationId] ?? ConversationEntry()
            entry.conversation = update
            state.setEntry(update.conversationId, entry)
            output.touchedKeys.insert(update.conversationId)
        case .identityUpdated(let identity):
            state.directory[identity.userId] = .known(identity.senderIdentity)
        case .identityDeleted(let deletion):
            state.directory[deletion.userId] = .deleted
        case .clock:
            break
        case .endOfInput:
            releaseWaiting(endOfInput: true, &state, &output)
        }
        releaseWaiting(endOfInput: false, &state, &output)
        return output
    }

    /// Releases, conversation by conversation, the held messages that may go.
    private func releaseWaiting(endOfInput: Bool, _ state: inout FanoutState, _ output: inout FanoutOutput) {
        for conversationId in state.waiting.sorted() {
            release(conversationId, endOfInput: endOfInput, &state, &output)
        }
    }

    private func receive(_ message: MessageReceived, _ state: inout FanoutState, _ output: inout FanoutOutput) {
        guard var entry = state.entries[message.conversationId], let conversation = entry.conversation else {
            output.rejection =
                "message \(message.messageId): unknown conversation \(message.conversationId) (no conversation.updated seen)"
            return
        }
        if entry.held.isEmpty, let sender = identity(message.senderId, in: state) {
            emit(message, conversation, sender: sender, latestAt: &entry.latestAt, &output)
            state.setLatestAt(entry.latestAt, of: message.conversationId)
            output.touchedKeys.insert(message.conversationId)
            return
        }
        entry.held.append(message)
        state.setEntry(message.conversationId, entry)
        output.touchedKeys.insert(message.conversationId)
    }

    /// `.some(identity)` when the sender's identity is settled (known, or
    /// deleted: `.some(nil)`), `nil` while it may still arrive.
    private func identity(_ userId: String, in state: FanoutState) -> SenderIdentity?? {
        switch state.directory[userId] {
        case .known(let identity)?: .some(identity)
        case .deleted?: .some(nil)
        case nil: nil
        }
    }

    /// Emits the held messages of a conversation from the front while their
    /// sender is settled or their wait (event time) is over: the wait of a message at `t` covers
    /// identities up to `t` + the identity wait, and is over once time is past that.
    private func release(
        _ conversationId: String, endOfInput: Bool, _ state: inout FanoutState, _ output: inout FanoutOutput
    ) {
        guard var entry = state.entries[conversationId], let conversation = entry.conversation else { return }
        let before = entry.held.count
        // The event time of the release: the end of a wait that ran out, else now (an identity came).
        var releasedAt: EventTime?
        while let head = entry.held.first {
            let waitEnd = head.at.adding(milliseconds: configuration.identityWaitMilliseconds + 1)
            if let sender = identity(head.senderId, in: state) {
                emit(
                    head, conversation, sender: sender, releasedAt: releasedAt ?? state.now ?? head.at,
                    latestAt: &entry.latestAt, &output)
            } else if endOfInput || (state.now.map { $0 >= waitEnd } ?? false) {
                releasedAt = max(releasedAt ?? waitEnd, waitEnd)
                emit(head, conversation, sender: nil, releasedAt: releasedAt, latestAt: &entry.latestAt, &output)
            } else {
                break
            }
            entry.held.removeFirst()
        }
        if entry.held.count != before {
            state.setEntry(conversationId, entry)
            output.touchedKeys.insert(conversationId)
        }
    }

    private func emit(
        _ message: MessageReceived, _ conversation: ConversationUpdated, sender: SenderIdentity?,
        releasedAt: EventTime? = nil, latestAt: inout EventTime?, _ output: inout FanoutOutput
    ) {
        let content = builder.content(of: message, in: conversation, sender: sender)
        // In event-time order a conversation's messages go out in the order of their times; one that
        // goes out after a later one was written to Kafka later than the lateness allows.
        let late = latestAt.map { message.at < $0 } ?? false
        latestAt = max(latestAt ?? message.at, message.at)
        for member in conversation.members {
            if member == message.senderId {
                output.decisions.append(
                    Decision(
                        at: message.at, eventId: message.id, reason: .ownMessage, userId: member,
                        conversationId: message.conversationId, messageId: message.messageId))
                continue
            }
            output.records.append(
                FanoutRecord(
                    at: message.at, recipientId: member, conversationId: message.conversationId,
                    messageId: message.messageId,
                    notificationType: message.mentions.contains(member) ? "mention" : "message", content: content,
                    releasedAt: releasedAt, late: late))
        }
    }
}
