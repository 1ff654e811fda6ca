import Foundation
import NotifyCore
import Synchronization

/// One thing the live console shows.
public enum ConsoleEntry: Sendable {
    /// An input record arrived (`type` is the event type, `summary` a one-line description, `at` its
    /// event time, `messageId` the message it is about, `traceId` the trace of its `traceparent` header).
    case event(
        topic: String, key: String?, type: String, summary: String, at: String? = nil,
        messageId: String? = nil, traceId: String? = nil)
    /// A delivery decided against, and why (own message, muted, foreground talk room, ...), at the event
    /// time of the event that caused it.
    case decision(
        userId: String, deviceId: String?, conversationId: String?, messageId: String?, reason: String,
        at: String? = nil)
    /// A command produced to `notify.commands`.
    case command(NotificationCommand)
    /// A sink's outcome for a command, with the trace its record carried.
    case outcome(NotificationOutcome, traceId: String? = nil)
}

/// The live console's feed: stages and sinks publish what happens; the console page reads it as
/// Server-Sent Events. It keeps the latest entries, so a page opened later shows recent history.
///
/// Each entry costs a JSON encoding: publish everything in `notify dev` and demos, and at most a
/// sample under production load.
public final class ConsoleFeed: Sendable {
    /// A published entry as the page receives it: a sequence number and its JSON.
    public struct Item: Sendable {
        public var sequence: Int
        /// A JSON object: `seq`, `at` (when it was published), `kind` (`event`, `decision`, `command`,
        /// `outcome`), `eventAt` (the event time it is about) and the entry's fields; a command carries its
        /// ``NotificationPreview`` under `preview`.
        public var json: String
    }

    private struct State {
        var nextSequence = 1
        var recent: [Item] = []
        var subscribers: [UUID: AsyncStream<Item>.Continuation] = [:]
        var finished = false
    }

    private let state = Mutex(State())
    private let capacity: Int
    private let actionsByCategory: [String: [String]]

    /// - Parameters:
    ///   - capacity: how many recent entries are kept for pages that connect later.
    ///   - actionsByCategory: action button titles per notification category (from `Schemas/categories.json`).
    public init(capacity: Int = 1000, actionsByCategory: [String: [String]] = [:]) {
        self.capacity = capacity
        self.actionsByCategory = actionsByCategory
    }

    /// Publishes an entry to every connected page and keeps it for later ones.
    public func publish(_ entry: ConsoleEntry) {
        // Encoded outside the lock; the sequence number is spliced in under it.
        let body = Self.encode(.object(fields(of: entry))).dropFirst()
        let at = Date.now.formatted(.iso8601)
        state.withLock { state in
            guard !state.finished else { return }
            let item = Item(
                sequence: state.nextSequence, json: "{\"seq\":\(state.nextSequence),\"at\":\"\(at)\"," + body)
            state.nextSequence += 1
            state.recent.append(item)
            if state.recent.count > capacity { state.recent.removeFirst(state.recent.count - capacity) }
            for continuation in state.subscribers.values { continuation.yield(item) }
        }
    }

    /// The kept entries, oldest first.
    public func recent() -> [Item] {
        state.withLock { $0.recent }
    }

    /// Kept entries after `sequence`, then every new one, until ``finish()`` or the consumer stops.
    public func subscribe(after sequence: Int) -> AsyncStream<Item> {
        let (stream, continuation) = AsyncStream<Item>.makeStream(bufferingPolicy: .bufferingNewest(capacity))
        let id = UUID()
        state.withLock { state in
            for item in state.recent where item.sequence > sequence { continuation.yield(item) }
            if state.finished {
                continuation.finish()
            } else {
                state.subscribers[id] = continuation
            }
        }
        continuation.onTermination = { [weak self] _ in
            _ = self?.state.withLock { $0.subscribers.removeValue(forKey: id) }
        }
        return stream
    }

    /// Ends every subscription (on shutdown), so open pages do not hold the HTTP server.
    public func finish() {
        let continuations = state.withLock { state in
            state.finished = true
            defer { state.subscribers.removeAll() }
            return Array(state.subscribers.values)
        }
        for continuation in continuations { continuation.finish() }
    }

    private func fields(of entry: ConsoleEntry) -> [String: JSONValue] {
        func text(_ value: String?) -> JSONValue { value.map(JSONValue.string) ?? .null }
        switch entry {
        case .event(let topic, let key, let type, let summary, let at, let messageId, let traceId):
            return [
                "kind": .string("event"), "topic": .string(topic), "key": text(key), "type": .string(type),
                "summary": .string(summary),
                "eventAt": text(at), "messageId": text(messageId), "traceId": text(traceId),
            ]
        case .decision(let userId, let deviceId, let conversationId, let messageId, let reason, let at):
            return [
                "kind": .string("decision"), "userId": .string(userId), "deviceId": text(deviceId),
                "conversationId": text(conversationId), "messageId": text(messageId), "reason": .string(reason),
                "eventAt": text(at),
            ]
        case .command(let command):
            let preview = NotificationPreview(command, actionsByCategory: actionsByCategory)
            return [
                "kind": .string("command"), "preview": Self.jsonValue(preview), "eventAt": .string(command.at),
                "messageId": text(command.messageId), "conversationId": text(command.conversationId),
            ]
        case .outcome(let outcome, let traceId):
            return [
                "kind": .string("outcome"), "commandId": .string(outcome.commandId), "sink": .string(outcome.sink),
                "userId": .string(outcome.recipient.userId), "deviceId": .string(outcome.recipient.deviceId),
                "outcome": .string(outcome.outcome.rawValue), "reason": text(outcome.reason),
                "eventAt": .string(outcome.at),
                "messageId": text(outcome.messageId), "conversationId": text(outcome.conversationId),
                "traceId": text(traceId),
            ]
        }
    }

    private static func jsonValue(_ value: some Encodable) -> JSONValue {
        guard let data = try? JSONEncoder().encode(value),
            let json = try? JSONDecoder().decode(JSONValue.self, from: data)
        else {
            return .null
        }
        return json
    }

    private static func encode(_ value: JSONValue) -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return (try? String(decoding: encoder.encode(value), as: UTF8.self)) ?? "{}"
    }
}
