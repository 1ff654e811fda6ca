import Foundation
import NotifyCore

extension ConsoleEntry {
    /// The console entry of a record read from a topic: a sink's outcome (from `notify.outcomes`) as an
    /// outcome, anything else as an event with its event time, its message id and a readable summary.
    /// - Parameters:
    ///   - traceparent: the record's W3C `traceparent` header, if any; its trace id is shown on the card.
    public static func record(topic: String, key: String?, value: [UInt8], traceparent: String? = nil) -> ConsoleEntry {
        let traceId = traceparent.flatMap(ConsoleEventSummary.traceId(ofTraceparent:))
        guard let json = try? CoreJSON.parse(value) else {
            return .event(
                topic: topic, key: key, type: "(unreadable)", summary: "\(value.count) bytes, not JSON",
                traceId: traceId)
        }
        if json["type"]?.stringValue == "notification.outcome",
            let outcome = try? JSONDecoder().decode(NotificationOutcome.self, from: Data(value))
        {
            return .outcome(outcome, traceId: traceId)
        }
        return .event(
            topic: topic, key: key, type: json["type"]?.stringValue ?? "(no type)",
            summary: ConsoleEventSummary.summary(of: json), at: json["at"]?.stringValue,
            messageId: json["messageId"]?.stringValue, traceId: traceId)
    }
}

/// One readable sentence per input event, for the console's flow.
enum ConsoleEventSummary {
    /// What `event` says, in words: who did what where. Unknown types fall back to compact JSON.
    static func summary(of event: JSONValue) -> String {
        func text(_ key: String) -> String? { event[key]?.stringValue }
        switch text("type") {
        case "message.received":
            let sender = text("senderId") ?? "?"
            var line = "\(sender) in \(text("conversationId") ?? "?")"
            if let kind = text("kind"), kind != "text" { line += " (\(kind))" }
            if let body = text("text") { line += ": “\(clipped(body, to: 80))”" }
            return line
        case "identity.updated":
            let name = text("displayName").map { "“\($0)”" } ?? "no display name"
            return "\(text("userId") ?? "?") is \(name)" + (text("handle").map { " (@\($0))" } ?? "")
        case "conversation.updated":
            let members = event["members"].flatMap(strings) ?? []
            let name = text("name").map { " “\($0)”" } ?? ""
            return
                "\(text("conversationId") ?? "?")\(name) (\(text("kind") ?? "?")): \(members.joined(separator: ", "))"
        case "devices.updated":
            guard case .array(let devices)? = event["devices"] else { return "\(text("userId") ?? "?"): devices" }
            let list = devices.map { device in
                "\(device["deviceId"]?.stringValue ?? "?") (\(device["platform"]?.stringValue ?? "?"), \(device["provider"]?.stringValue ?? "?"))"
            }
            return "\(text("userId") ?? "?") has \(list.isEmpty ? "no devices" : list.joined(separator: ", "))"
        case "preferences.updated":
            var parts = ["previews \(text("previews") ?? "default")"]
            if case .object(let muted)? = event["muted"], !muted.isEmpty {
                parts.append("muted \(muted.keys.sorted().joined(separator: ", "))")
            }
            return "\(text("userId") ?? "?"): \(parts.joined(separator: ", "))"
        case "client.state":
            var line = "\(text("userId") ?? "?")/\(text("deviceId") ?? "?") is \(text("state") ?? "?")"
            if let screen = event["screen"], let kind = screen["kind"]?.stringValue {
                line += " on \(kind)" + (screen["conversationId"]?.stringValue.map { " \($0)" } ?? "")
            }
            return line
        case "notification.fanout":
            let content = event["content"]
            var line =
                "\(text("messageId") ?? "?") for \(text("recipientId") ?? "?") (\(text("notificationType") ?? "?"))"
            if let title = content?["title"]?.stringValue { line += ": \(title)" }
            if let body = content?["body"]?.stringValue { line += ": “\(clipped(body, to: 80))”" }
            return line
        case "conversation.read":
            return "\(text("userId") ?? "?") read \(text("conversationId") ?? "?")"
        default:
            return clipped(String(decoding: CoreJSON.encode(event), as: UTF8.self), to: 160)
        }
    }

    /// The trace id of a `traceparent` header (`00-<32 hex>-<16 hex>-<2 hex>`), or nil if it is not one.
    static func traceId(ofTraceparent header: String) -> String? {
        let parts = header.split(separator: "-")
        guard parts.count == 4, parts[1].count == 32, parts[1].allSatisfy(\.isHexDigit) else { return nil }
        return String(parts[1])
    }

    private static func strings(_ value: JSONValue) -> [String]? {
        guard case .array(let elements) = value else { return nil }
        return elements.compactMap(\.stringValue)
    }

    private static func clipped(_ text: String, to length: Int) -> String {
        text.count > length ? String(text.prefix(length)) + "…" : text
    }
}
