import AsyncHTTPClient
import Foundation
import Logging
import NotifyCore
import Testing

@testable import NotifyService

@Suite("Live console: previews, page and event stream")
struct ConsoleFeedTests {
    @Test("a preview carries what the banners show, from the command's shared content")
    func preview() {
        let group = NotificationPreview(SampleCommands.groupImageToIOS, actionsByCategory: SampleCommands.actions)
        #expect(group.title == "Alice Martin")
        #expect(group.subtitle == "Weekend hike")
        #expect(group.senderName == "Alice Martin")
        #expect(group.groupName == "Weekend hike")
        #expect(group.attachmentURL == "https://cdn.example.com/p/summit.jpg")
        #expect(group.actions == ["Reply", "Mute"])
        #expect(group.badge == 3)
        #expect(!group.silent)
        let direct = NotificationPreview(SampleCommands.directToAndroid, actionsByCategory: [:])
        #expect(direct.groupName == nil)
        #expect(direct.actions == [])
        #expect(!direct.identityResolved)
        #expect(NotificationPreview(SampleCommands.badgeClear, actionsByCategory: [:]).silent)
    }

    @Test("the action buttons come from Schemas/categories.json, and core decisions become entries")
    func coreTypes() throws {
        let schemas = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("Schemas/categories.json")
        let categories = try NotificationCategories(json: Array(try Data(contentsOf: schemas)))
        let feed = ConsoleFeed(categories: categories)
        feed.publish(.command(SampleCommands.groupImageToIOS))
        #expect(feed.recent().first?.json.contains(#""actions":["Reply","Mute"]"#) == true)
        let decision = Decision(
            at: try #require(EventTime(rfc3339: "2026-11-22T03:00:00Z")), eventId: "e-1", reason: .muted,
            userId: "u-carol", deviceId: "d-1", conversationId: "c-hike", messageId: "m-1")
        feed.publish(.decision(decision))
        #expect(feed.recent().last?.json.contains(#""reason":"muted""#) == true)
        #expect(feed.recent().last?.json.contains(#""userId":"u-carol""#) == true)
    }

    @Test("the feed keeps recent entries in order and drops the oldest beyond its capacity")
    func recent() {
        let feed = ConsoleFeed(capacity: 2)
        for index in 1...3 {
            feed.publish(
                .event(topic: "chat.messages", key: "c\(index)", type: "message.received", summary: "m\(index)"))
        }
        #expect(feed.recent().map(\.sequence) == [2, 3])
        #expect(feed.recent().last?.json.contains("\"summary\":\"m3\"") == true)
    }

    @Test("the page embeds recent entries inline, escaped so feed text cannot end the script")
    func page() async throws {
        try await withRunningShell { shell, port in
            shell.console.publish(
                .event(topic: "chat.messages", key: "c1", type: "message.received", summary: "</script><b>x</b>"))
            let page = try await get("/", port: port)
            #expect(page.status == 200)
            #expect(page.contentType == "text/html; charset=utf-8")
            #expect(page.body.contains("const INITIAL_ENTRIES = [{"))
            #expect(page.body.contains(#"<\/script><b>x<\/b>"#))
            #expect(!page.body.contains("</script><b>"))
        }
    }

    @Test("/console/events streams kept entries, then new ones, as Server-Sent Events")
    func serverSentEvents() async throws {
        try await withRunningShell { shell, port in
            shell.console.publish(
                .event(topic: "chat.messages", key: "c-hike", type: "message.received", summary: "m-1"))
            shell.console.publish(
                .decision(
                    userId: "u-alice", deviceId: nil, conversationId: "c-hike", messageId: "m-1", reason: "own message")
            )
            let response = try await HTTPClient.shared.execute(
                HTTPClientRequest(url: "http://127.0.0.1:\(port)/console/events?after=1"), timeout: .seconds(30))
            #expect(response.headers.first(name: "content-type") == "text/event-stream")
            var events: [[String: Any]] = []
            var pending = ""
            var published = false
            for try await chunk in response.body {
                pending += String(buffer: chunk)
                while let end = pending.range(of: "\n\n") {
                    let block = pending[..<end.lowerBound]
                    pending.removeSubrange(..<end.upperBound)
                    guard let data = block.split(separator: "\n").first(where: { $0.hasPrefix("data: ") })?.dropFirst(6)
                    else { continue }
                    events.append(try JSONSerialization.jsonObject(with: Data(data.utf8)) as! [String: Any])
                }
                if events.count == 1, !published {
                    published = true
                    shell.console.publish(.command(SampleCommands.groupImageToIOS))
                }
                if events.count == 2 { break }
            }
            #expect(events.map { $0["seq"] as? Int } == [2, 3])
            #expect(events.first?["kind"] as? String == "decision")
            #expect(events.first?["reason"] as? String == "own message")
            let preview = events.last?["preview"] as? [String: Any]
            #expect(events.last?["kind"] as? String == "command")
            #expect(preview?["title"] as? String == "Alice Martin")
            #expect(preview?["deviceId"] as? String == "d-bob-iphone")
        }
    }

    @Test(
        "records as the stages read them: outcomes become outcome entries, events read as sentences with their time and trace"
    )
    func records() throws {
        let outcome =
            #"{"type":"notification.outcome","id":"o-1","at":"2026-11-22T03:00:05Z","commandId":"cmd-1","sink":"inapp","recipient":{"userId":"bob","deviceId":"bob-pixel","platform":"android","provider":"fcm"},"messageId":"m1","outcome":"undeliverable-local","reason":"not-connected"}"#
        let trace = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
        guard
            case .outcome(let decoded, let traceId) = ConsoleEntry.record(
                topic: "notify.outcomes", key: "bob", value: Array(outcome.utf8), traceparent: trace)
        else {
            Issue.record("not an outcome")
            return
        }
        #expect(
            decoded.outcome == .undeliverableLocal && decoded.reason == "not-connected" && decoded.messageId == "m1")
        #expect(traceId == "4bf92f3577b34da6a3ce929d0e0e4736")

        func summary(_ topic: String, _ json: String) -> (
            type: String, summary: String, at: String?, messageId: String?
        ) {
            guard
                case .event(_, _, let type, let summary, let at, let messageId, _) = ConsoleEntry.record(
                    topic: topic, key: nil, value: Array(json.utf8))
            else {
                return ("", "", nil, nil)
            }
            return (type, summary, at, messageId)
        }
        let message = summary(
            "chat.messages",
            #"{"type":"message.received","id":"e","at":"2026-11-22T09:00:06Z","messageId":"m2","conversationId":"g-hiking","senderId":"bob","kind":"image","text":"The view"}"#
        )
        #expect(message.summary == "bob in g-hiking (image): “The view”")
        #expect(message.at == "2026-11-22T09:00:06Z" && message.messageId == "m2")
        #expect(
            summary(
                "chat.identities",
                #"{"type":"identity.updated","id":"e","at":"2026-11-22T09:00:00Z","userId":"bob","displayName":"Bob 山田","handle":"bob"}"#
            ).summary
                == "bob is “Bob 山田” (@bob)")
        #expect(
            summary(
                "chat.client-state",
                #"{"type":"client.state","id":"e","at":"2026-11-22T09:00:04Z","userId":"bob","deviceId":"bob-iphone","state":"foreground","screen":{"kind":"talkroom","conversationId":"dm"}}"#
            ).summary
                == "bob/bob-iphone is foreground on talkroom dm")
        #expect(
            summary(
                "chat.devices",
                #"{"type":"devices.updated","id":"e","at":"2026-11-22T09:00:02Z","userId":"dan","devices":[{"deviceId":"dan-pixel","platform":"android","provider":"fcm","token":"t","appId":"a"}]}"#
            ).summary
                == "dan has dan-pixel (android, fcm)")
        #expect(
            summary(
                "chat.reads",
                #"{"type":"conversation.read","id":"e","at":"2026-11-22T09:00:20Z","userId":"bob","conversationId":"g"}"#
            ).summary == "bob read g")
        let fanout = summary(
            "notify.fanout",
            #"{"type":"notification.fanout","id":"f","at":"2026-11-22T09:00:06Z","recipientId":"dan","conversationId":"g","messageId":"m2","notificationType":"message","content":{"title":"Hiking club","body":"Bob 山田: The view"}}"#
        )
        #expect(fanout.summary == "m2 for dan (message): Hiking club: “Bob 山田: The view”" && fanout.messageId == "m2")
        #expect(summary("chat.messages", "not json").type == "(unreadable)")
    }
}
