import Foundation

/// An input of stage 2 ("route"); all are keyed by user id.
public enum RouteInput: Sendable {
    case fanout(FanoutRecord)
    case devices(DevicesUpdated)
    case preferences(PreferencesUpdated)
    case clientState(ClientStateChanged)
    case read(ConversationRead)
    case outcome(NotificationOutcome)
    /// Time has advanced to this instant: sends coalesced badge pushes that are due.
    case clock(EventTime)
    /// No more input: send every coalesced badge push now.
    case endOfInput
}

/// What stage 2 made of one input.
public struct RouteOutput: Sendable {
    /// One command per device that should hear about it, in order.
    public var commands: [NotificationCommand] = []
    /// One per delivery not made: who, which device, why.
    public var decisions: [Decision] = []
    /// User ids whose ``RouteState/entries`` changed, for the changelog.
    public var touchedKeys: Set<String> = []
    /// The input was an event already applied (same id, same user): nothing was done.
    public var duplicate = false

    public init() {}
}

/// The per-user state of stage 2, written to `notify.route-changelog` (key: user id).
public struct UserEntry: Sendable, Hashable, Codable {
    /// A background push to one device that waits for the rate limit (rule 12).
    public struct PendingBadge: Sendable, Hashable, Codable {
        /// The latest event that asked for it: its id makes the command id.
        public var eventId: String
        public var at: EventTime
        /// Threads to clear, sorted.
        public var clearThreadIds: [String]
    }

    /// A local delivery that may come back as `undeliverable-local`.
    public struct RecentLocal: Sendable, Hashable, Codable {
        public var commandId: String
        public var record: FanoutRecord
    }

    public var devices: [Device] = []
    public var preferences: PreferencesUpdated?
    /// The latest client state of each device, by device id.
    public var clientStates: [String: ClientStateChanged] = [:]
    /// Unread messages per conversation; the badge is their sum.
    public var unread: [String: Int] = [:]
    /// Tokens reported invalid since the device list last changed (rule 16), sorted.
    public var invalidTokens: [String] = []
    /// When the last background push went to each device.
    public var lastBackgroundPush: [String: EventTime] = [:]
    /// Coalesced background pushes by device id.
    public var pendingBadges: [String: PendingBadge] = [:]
    /// The latest local deliveries, oldest first.
    public var recentLocal: [RecentLocal] = []
    /// Per conversation, the time of the latest read that no later message has passed yet: a
    /// message of that conversation sent before it (one held for its sender's identity) was read.
    public var readUpTo: [String: EventTime] = [:]
    /// Conversation id → the latest message routed to this user in it (see ``LatestMessage``).
    public var latestMessages: [String: LatestMessage] = [:]
    /// Conversation id → message id → time, of the late messages routed to this user (see
    /// ``FanoutRecord/late``): a copy of one is recognised by its id, not by ``latestMessages``.
    /// Kept, like those, until no message of that time can still be delivered.
    public var lateMessages: [String: [String: EventTime]] = [:]

    /// The latest message of one conversation routed to the user: its time and the ids of the
    /// messages of that time. Stage 1 writes a conversation's records in event-time order, marking
    /// the rare one older than a record before it ``FanoutRecord/late``, so an unmarked record older
    /// than it, or one of those ids again, is a copy (stage 1 re-emits records after a crash, at new
    /// offsets, however late): it is not counted or delivered again. Kept until
    /// no message of that time can still be delivered (the longest TTL of the policies).
    public struct LatestMessage: Sendable, Hashable, Codable {
        public var at: EventTime
        /// Sorted.
        public var messageIds: [String]
    }

    public init() {}

    /// The unread total.
    public var badge: Int { unread.values.reduce(0, +) }
}

/// The state of one stage-2 task: the users of its partition.
public struct RouteState: Sendable {
    public private(set) var entries: [String: UserEntry] = [:]
    /// Users with coalesced badge pushes.
    private(set) var pending: Set<String> = []
    /// User id → the ids of the last events applied to the user (see ``RecentEventIds``).
    var recent: [String: RecentEventIds] = [:]
    /// The latest event time seen.
    public private(set) var now: EventTime?

    public init() {}

    /// The changelog value of `key` (`nil`: no entry, a tombstone).
    public func snapshot(_ key: String) -> [UInt8]? {
        guard let entry = entries[key] else { return nil }
        return CoreJSON.encode(entry)
    }

    /// The ids of the last events applied to user `key`, oldest first, for its changelog record.
    public func recentEventIds(_ key: String) -> [String] { recent[key]?.ids ?? [] }

    /// Restores an entry from its changelog value (`nil`: a tombstone) and the ids of the last
    /// events applied to it.
    public mutating func restore(_ key: String, _ value: [UInt8]?, recentEventIds: [String] = []) throws {
        recent[key] = recentEventIds.isEmpty ? nil : RecentEventIds(recentEventIds)
        guard let value else {
            entries[key] = nil
            pending.remove(key)
            return
        }
        setEntry(key, try UserEntry(changelog: value))
    }

    /// Changes the entry of `key` where it is in the table (one lookup, no copy),
    /// starting from an empty one if `creating` and there is none; `nil` when
    /// there is none and not `creating`.
    @discardableResult @inline(__always)
    mutating func updateEntry<Result>(_ key: String, creating: Bool, _ change: (inout UserEntry) -> Result) -> Result? {
        var found = entries.index(forKey: key)
        if found == nil, creating {
            entries[key] = UserEntry()
            found = entries.index(forKey: key)
        }
        guard let index = found else { return nil }
        // Changed and read in place: reading the entry out of the table would copy all of it.
        let (result, hasPendingBadges) = { (entry: inout UserEntry) in (change(&entry), !entry.pendingBadges.isEmpty) }(
            &entries.values[index])
        notePending(key, hasPendingBadges: hasPendingBadges)
        return result
    }

    mutating func setEntry(_ key: String, _ entry: UserEntry) {
        entries[key] = entry
        notePending(key, hasPendingBadges: !entry.pendingBadges.isEmpty)
    }

    private mutating func notePending(_ key: String, hasPendingBadges: Bool) {
        if hasPendingBadges {
            pending.insert(key)
        } else if !pending.isEmpty {
            pending.remove(key)
        }
    }

    mutating func advance(to time: EventTime) {
        if now.map({ time > $0 }) ?? true { now = time }
    }
}

/// Stage 2: decides, per device, whether and how a recipient hears about a
/// message (rules 3–8, 12, 16) and builds the commands.
public struct RouteStage: Sendable {
    public let configuration: CoreConfiguration
    private let builder: CommandBuilder
    /// The longest TTL of the policies: no delivery of a message older than that can still be made.
    private let longestTTLMilliseconds: Int64

    public init(configuration: CoreConfiguration) {
        self.configuration = configuration
        self.builder = CommandBuilder(configuration: configuration)
        self.longestTTLMilliseconds = configuration.policies.longestTTLSeconds * 1000
    }

    /// Folds one input into the state.
    ///
    /// Time is event time: coalesced badge pushes that are due by the input's time go out first,
    /// with the badge as it was before the input, so whether the clock or a later event releases
    /// them, they carry the same bytes.
    public func fold(_ state: inout RouteState, _ input: RouteInput) -> RouteOutput {
        var output = RouteOutput()
        var userId: String?
        var eventId: String?
        var time: EventTime?
        switch input {
        case .fanout(let record): (userId, eventId, time) = (record.recipientId, record.id, record.at)
        case .devices(let event): (userId, eventId, time) = (event.userId, event.id, event.at)
        case .preferences(let event): (userId, eventId, time) = (event.userId, event.id, event.at)
        case .clientState(let event): (userId, eventId, time) = (event.userId, event.id, event.at)
        case .read(let event): (userId, eventId, time) = (event.userId, event.id, event.at)
        case .outcome(let outcome):
            (userId, eventId, time) = (outcome.recipient.userId, outcome.id, EventTime(rfc3339: outcome.at))
        case .clock(let now): time = now
        case .endOfInput: break
        }
        // Noted as applied before it is (nothing below reads the ids): one look-up of the user.
        if let userId, let eventId, !state.recent[userId, default: RecentEventIds()].insertIfNew(eventId) {
            output.duplicate = true
            return output  // The same event again (an at-least-once producer's duplicate).
        }
        if let time { state.advance(to: time) }
        releaseDueBadges(&state, endOfInput: false, &output)
        if let userId, eventId != nil {
            let now = state.now
            state.updateEntry(userId, creating: true) { apply(input, &$0, now: now, &output) }
            output.touchedKeys.insert(userId)
        }
        if case .endOfInput = input { releaseDueBadges(&state, endOfInput: true, &output) }
        return output
    }

    /// Sends the coalesced badge pushes that are due (all of them at the end of input).
    private func releaseDueBadges(_ state: inout RouteState, endOfInput: Bool, _ output: inout RouteOutput) {
        let now = state.now
        for userId in state.pending.sorted() {
            let released: Void? = state.updateEntry(userId, creating: false) {
                releaseBadges(userId, &$0, now: now, endOfInput: endOfInput, &output)
            }
            if released != nil { output.touchedKeys.insert(userId) }
        }
    }

    /// Applies an input about one user to the user's entry (the stage's clock has already advanced).
    private func apply(_ input: RouteInput, _ entry: inout UserEntry, now: EventTime?, _ output: inout RouteOutput) {
        switch input {
        case .fanout(let record):
            guard isNew(record, &entry, now: now) else {
                return output.decisions.append(
                    Decision(
                        at: record.at, eventId: record.id, reason: .alreadyApplied, userId: record.recipientId,
                        conversationId: record.conversationId, messageId: record.messageId))
            }
            route(record, &entry, &output)
        case .devices(let event):
            entry.devices = event.devices
            entry.invalidTokens = []
            let deviceIds = Set(event.devices.map(\.deviceId))
            entry.clientStates = entry.clientStates.filter { deviceIds.contains($0.key) }
            entry.pendingBadges = entry.pendingBadges.filter { deviceIds.contains($0.key) }
            entry.lastBackgroundPush = entry.lastBackgroundPush.filter { deviceIds.contains($0.key) }
        case .preferences(let event):
            entry.preferences = event
        case .clientState(let event):
            entry.clientStates[event.deviceId] = event
        case .read(let event):
            read(event, &entry, &output)
        case .outcome(let outcome):
            receive(outcome, &entry, &output)
        case .clock, .endOfInput:
            break
        }
    }

    // MARK: messages

    /// Whether `record` is not a copy of one already routed (see ``UserEntry/LatestMessage``); notes it if new,
    /// and forgets the latest messages of conversations no delivery of which can still be made.
    private func isNew(_ record: FanoutRecord, _ entry: inout UserEntry, now: EventTime?) -> Bool {
        let passed = entry.latestMessages.index(forKey: record.conversationId).map { index in
            let latest = entry.latestMessages.values[index]
            return record.at < latest.at || (record.at == latest.at && latest.messageIds.contains(record.messageId))
        }
        if record.late {
            // Came after a later message of its conversation: new unless its id was seen.
            guard entry.lateMessages[record.conversationId]?[record.messageId] == nil else { return false }
            entry.lateMessages[record.conversationId, default: [:]][record.messageId] = record.at
        } else if passed == true {
            return false
        }
        if let now {
            // Rebuilt only when something is to go: most records find nothing past the horizon.
            let horizon = now.adding(milliseconds: -longestTTLMilliseconds)
            if entry.latestMessages.values.contains(where: { $0.at < horizon }) {
                entry.latestMessages = entry.latestMessages.filter { $0.value.at >= horizon }
            }
            if entry.lateMessages.values.contains(where: { $0.isEmpty || $0.values.contains { $0 < horizon } }) {
                entry.lateMessages = entry.lateMessages.compactMapValues { messages in
                    let kept = messages.filter { $0.value >= horizon }
                    return kept.isEmpty ? nil : kept
                }
            }
        }
        guard passed != true else { return true }  // A late one: the conversation's latest stays.
        guard let index = entry.latestMessages.index(forKey: record.conversationId) else {
            entry.latestMessages[record.conversationId] = UserEntry.LatestMessage(
                at: record.at, messageIds: [record.messageId])
            return true
        }
        // Changed where it is: most records replace their conversation's latest, and its list of ids
        // is reused rather than allocated anew.
        { (latest: inout UserEntry.LatestMessage) in
            if latest.at != record.at {
                latest.at = record.at
                latest.messageIds.removeAll(keepingCapacity: true)
            }
            let position = latest.messageIds.firstIndex { $0 > record.messageId } ?? latest.messageIds.endIndex
            latest.messageIds.insert(record.messageId, at: position)
        }(&entry.latestMessages.values[index])
        return true
    }

    private func route(_ record: FanoutRecord, _ entry: inout UserEntry, _ output: inout RouteOutput) {
        let userId = record.recipientId
        func suppress(_ reason: SuppressionReason, _ deviceId: String?) {
            output.decisions.append(
                Decision(
                    at: record.at, eventId: record.id, reason: reason, userId: userId, deviceId: deviceId,
                    conversationId: record.conversationId, messageId: record.messageId))
        }
        if let read = entry.readUpTo[record.conversationId] {
            // A conversation's messages arrive in order: once one is newer than the read, none older follows.
            guard record.at > read else { return suppress(.alreadyRead, nil) }
            entry.readUpTo[record.conversationId] = nil
        }
        entry.unread[record.conversationId, default: 0] += 1
        guard !entry.devices.isEmpty else { return suppress(.noDevices, nil) }
        if entry.preferences?.isMuted(record.conversationId, at: record.at) ?? false {
            for device in entry.devices { suppress(.muted, device.deviceId) }
            return
        }
        var content = record.content
        content.badge = entry.badge
        if entry.preferences?.previews == .never {
            content.body = configuration.texts.hiddenPreviewBody
            content.attachment = nil
        }
        var prepared: CommandBuilder.PreparedMessage?
        output.commands.reserveCapacity(output.commands.count + entry.devices.count)
        for device in entry.devices {
            if entry.invalidTokens.contains(device.token) {
                suppress(.tokenInvalid, device.deviceId)
                continue
            }
            switch path(for: device, conversationId: record.conversationId, at: record.at, entry) {
            case .suppressed(let reason):
                suppress(reason, device.deviceId)
            case .deliver(let path):
                let message = prepared ?? builder.prepare(record, content: content)
                prepared = message
                let command = builder.messageCommand(message, device: device, path: path)
                if path == .local { remember(command.id, record, &entry) }
                output.commands.append(command)
            }
        }
    }

    private enum Routing {
        case deliver(DeliveryPath)
        case suppressed(SuppressionReason)
    }

    /// Rules 4–7.
    private func path(for device: Device, conversationId: String, at time: EventTime, _ entry: UserEntry) -> Routing {
        guard let client = entry.clientStates[device.deviceId], client.state == .foreground,
            time.milliseconds - client.at.milliseconds <= configuration.clientStateMaxAgeMilliseconds
        else {
            return .deliver(.push)
        }
        switch client.screen?.kind {
        case .talkroom? where client.screen?.conversationId == conversationId:
            return .suppressed(.foregroundInConversation)
        case .tabbar?: return .suppressed(.foregroundTabBar)
        default: return .deliver(.local)
        }
    }

    /// Keeps the latest `recentLocalLimit` local deliveries: the oldest make room
    /// before the newest goes in, so a full list never outgrows its storage.
    private func remember(_ commandId: String, _ record: FanoutRecord, _ entry: inout UserEntry) {
        let limit = configuration.recentLocalLimit
        guard limit > 0 else { return entry.recentLocal.removeAll() }
        if entry.recentLocal.count >= limit {
            entry.recentLocal.removeFirst(entry.recentLocal.count - limit + 1)
        } else {
            entry.recentLocal.reserveCapacity(limit)
        }
        entry.recentLocal.append(UserEntry.RecentLocal(commandId: commandId, record: record))
    }

    // MARK: outcomes

    /// Rule 16: an invalid token is blocked until the device list changes; a
    /// local delivery the app could not show goes out again on the push path.
    private func receive(_ outcome: NotificationOutcome, _ entry: inout UserEntry, _ output: inout RouteOutput) {
        switch outcome.outcome {
        case .tokenInvalid:
            if let token = outcome.token
                ?? entry.devices.first(where: { $0.deviceId == outcome.recipient.deviceId })?.token
            {
                if !entry.invalidTokens.contains(token) {
                    entry.invalidTokens = (entry.invalidTokens + [token]).sorted()
                }
            }
        case .undeliverableLocal:
            guard let index = entry.recentLocal.firstIndex(where: { $0.commandId == outcome.commandId }),
                let device = entry.devices.first(where: { $0.deviceId == outcome.recipient.deviceId }),
                !entry.invalidTokens.contains(device.token)
            else { return }
            let record = entry.recentLocal.remove(at: index).record
            var content = record.content
            content.badge = entry.badge
            if entry.preferences?.previews == .never {
                content.body = configuration.texts.hiddenPreviewBody
                content.attachment = nil
            }
            output.commands.append(builder.messageCommand(record, content: content, device: device, path: .push))
        case .delivered:
            entry.recentLocal.removeAll { $0.commandId == outcome.commandId }
        case .expired, .failed, .attempting:
            break
        }
    }

    // MARK: badges

    /// Rule 12: a read lowers the badge and sends a background push to every
    /// device, at most one per device per interval; the rest are coalesced. A
    /// read of a conversation with nothing unread changes no badge and sends
    /// nothing (Apple throttles background pushes); either way, a message of
    /// the conversation sent before the read that arrives after it is not notified.
    private func read(_ event: ConversationRead, _ entry: inout UserEntry, _ output: inout RouteOutput) {
        if entry.readUpTo[event.conversationId].map({ event.at > $0 }) ?? true {
            entry.readUpTo[event.conversationId] = event.at
        }
        guard entry.unread.removeValue(forKey: event.conversationId) != nil else { return }
        for device in entry.devices where !entry.invalidTokens.contains(device.token) {
            var pending =
                entry.pendingBadges[device.deviceId]
                ?? UserEntry.PendingBadge(eventId: event.id, at: event.at, clearThreadIds: [])
            pending.eventId = event.id
            pending.at = event.at
            if !pending.clearThreadIds.contains(event.conversationId) {
                pending.clearThreadIds = (pending.clearThreadIds + [event.conversationId]).sorted()
            }
            if let last = entry.lastBackgroundPush[device.deviceId],
                event.at.milliseconds - last.milliseconds < configuration.backgroundPushIntervalMilliseconds
            {
                entry.pendingBadges[device.deviceId] = pending
                output.decisions.append(
                    Decision(
                        at: event.at, eventId: event.id, reason: .backgroundPushCoalesced,
                        userId: event.userId, deviceId: device.deviceId, conversationId: event.conversationId))
            } else {
                entry.pendingBadges[device.deviceId] = nil
                sendBadge(pending, at: event.at, userId: event.userId, device: device, &entry, &output)
            }
        }
    }

    private func releaseBadges(
        _ userId: String, _ entry: inout UserEntry, now: EventTime?, endOfInput: Bool, _ output: inout RouteOutput
    ) {
        for deviceId in entry.pendingBadges.keys.sorted() {
            guard let pending = entry.pendingBadges[deviceId],
                let device = entry.devices.first(where: { $0.deviceId == deviceId })
            else {
                entry.pendingBadges[deviceId] = nil
                continue
            }
            let due = (entry.lastBackgroundPush[deviceId] ?? pending.at).adding(
                milliseconds: configuration.backgroundPushIntervalMilliseconds)
            guard endOfInput || (now.map { $0 >= due } ?? false) else { continue }
            entry.pendingBadges[deviceId] = nil
            sendBadge(pending, at: max(due, pending.at), userId: userId, device: device, &entry, &output)
        }
    }

    private func sendBadge(
        _ pending: UserEntry.PendingBadge, at time: EventTime, userId: String, device: Device,
        _ entry: inout UserEntry, _ output: inout RouteOutput
    ) {
        entry.lastBackgroundPush[device.deviceId] = time
        let update = BadgeUpdate(badge: entry.badge, clearThreadIds: pending.clearThreadIds)
        output.commands.append(
            builder.badgeCommand(source: pending.eventId, at: time, userId: userId, update: update, device: device))
    }
}
