import Testing

@testable import NotifyCore

@Suite struct ScenarioRunnerTests {
    @Test func badEventsAreReportedByIndexAndFieldAndTheRestStillRuns() throws {
        let scenario = #"""
            {"events": [
             {"topic": "chat.conversations", "value": {"type": "conversation.updated", "id": "c", "at": "2026-11-22T10:00:00Z", "conversationId": "c1", "kind": "direct", "members": ["a", "b"]}},
             {"topic": "chat.devices", "value": {"type": "devices.updated", "id": "d", "at": "2026-11-22T10:00:00Z", "userId": "b", "devices": [{"deviceId": "x", "platform": "ios", "provider": "apns", "token": "t"}]}},
             {"topic": "chat.devices", "value": {"type": "devices.updated", "id": "d2", "at": "2026-11-22T10:00:00Z", "userId": "b", "devices": [{"deviceId": "x", "platform": "ios", "provider": "apns", "token": "t", "appId": "app"}]}},
             {"topic": "chat.messages", "value": {"type": "message.received", "id": "e1", "at": "2026-11-22T10:00:01Z", "messageId": "m1", "conversationId": "c9", "senderId": "a", "kind": "text", "text": "x"}},
             {"topic": "chat.message", "value": {"type": "message.received"}},
             {"topic": "chat.messages", "value": {"type": "message.received", "id": "e2", "at": "2026-11-22T10:00:02Z", "messageId": "m2", "conversationId": "c1", "senderId": "a", "kind": "text", "text": "still delivered"}}
            ]}
            """#
        let result = try ScenarioRunner(configuration: Repository.configuration()).run(scenario: scenario.bytes)
        #expect(
            result.rejections.map(\.description) == [
                #"events[1] (chat.devices, id d): field "devices[0].appId": missing"#,
                "events[3] (chat.messages, id e1): message m1: unknown conversation c9 (no conversation.updated seen)",
                #"events[4] (chat.message): field "(topic)": not a topic the core reads (one of chat.messages, chat.conversations, chat.identities, chat.devices, chat.preferences, chat.client-state, chat.reads, notify.fanout, notify.outcomes)"#,
            ])
        #expect(
            result.commands.map(\.messageId) == ["m2"],
            "the unknown sender a falls back at the end; the bad events stop nothing")
        #expect(result.commands.first?.content["identityResolved"] == .bool(false))
    }

    /// A scenario moved in time (as `notify dev` plays its demo from now) makes the same
    /// deliveries: every time it holds moves by the same amount, mute ends included.
    @Test func aShiftedScenarioMakesTheSameDeliveriesLater() throws {
        let bytes = try Repository.bytes(Repository.schemas.appendingPathComponent("examples/scenarios/demo.json"))
        let events = try ScenarioRunner.events(of: bytes)
        let day: Int64 = 86_400_000
        let shifted = events.map { $0.shifted(byMilliseconds: 400 * day) }
        #expect(shifted.map(\.topic) == events.map(\.topic))
        for (before, after) in zip(events, shifted) {
            let times = [before, after].map { EventTime(rfc3339: $0.value["at"]?.stringValue ?? "")?.milliseconds }
            #expect(times[1] == times[0].map { $0 + 400 * day })
        }
        let mutes = zip(events, shifted).filter { $0.0.topic == Topic.preferences }.compactMap {
            pair -> (JSONValue, JSONValue)? in
            guard let muted = pair.0.value["muted"], let moved = pair.1.value["muted"] else { return nil }
            return (muted, moved)
        }
        #expect(
            mutes.contains { if case .object(let members) = $0.0 { !members.isEmpty } else { false } },
            "the demo mutes a conversation")
        for (muted, moved) in mutes {
            guard case .object(let before) = muted, case .object(let after) = moved else { continue }
            for (conversation, until) in before {
                let end = until.stringValue.flatMap(EventTime.init(rfc3339:))?.milliseconds
                #expect(
                    after[conversation]?.stringValue.flatMap(EventTime.init(rfc3339:))?.milliseconds
                        == end.map { $0 + 400 * day })
            }
        }
        // The demo mutes for good (null); a mute with an end moves with the rest, and a permanent one stays.
        let preferences = ScenarioRunner.Event(
            topic: Topic.preferences,
            value: try CoreJSON.parse(
                #"{"type":"preferences.updated","id":"p","at":"2026-11-22T09:00:00Z","userId":"dan","previews":"always","muted":{"c1":"2026-11-22T10:00:00Z","c2":null}}"#
            ))
        let moved = preferences.shifted(byMilliseconds: day)
        #expect(moved.value["at"] == .string("2026-11-23T09:00:00Z"))
        #expect(moved.value["muted"]?["c1"] == .string("2026-11-23T10:00:00Z"))
        #expect(moved.value["muted"]?["c2"] == .null)
        let runner = ScenarioRunner(configuration: try Repository.configuration())
        let original = runner.run(events: events)
        let later = runner.run(events: shifted)
        #expect(later.commands.map(\.id) == original.commands.map(\.id))
        #expect(later.commands.map { $0.content } == original.commands.map { $0.content })
        #expect(later.decisions.map(\.reason) == original.decisions.map(\.reason))
    }

    @Test func aMalformedScenarioFileSaysWhere() {
        let error = #expect(throws: EventDecodingError.self) {
            try ScenarioRunner.events(of: "{\"events\": [\n  {\"topic\": \"chat.reads\",\n   \"value\": {,}}]}".bytes)
        }
        #expect(error?.field == "line 3, column 14")
        #expect(error?.problem.hasPrefix("invalid JSON") == true)
        let shape = #expect(throws: EventDecodingError.self) {
            try ScenarioRunner.events(of: #"{"events": [{"topic": "chat.reads"}]}"#.bytes)
        }
        #expect(shape?.field == "events[0].value")
    }
}

/// What crosses Kafka between the stages and back from the sinks decodes to exactly what was written.
@Suite struct WireRoundTripTests {
    @Test func fanoutRecordsAndOutcomesSurviveTheTopics() throws {
        let configuration = try Repository.configuration()
        let events = try ScenarioRunner.events(
            of: Repository.bytes(Repository.schemas.appendingPathComponent("examples/scenarios/demo.json")))
        let stage = FanoutStage(configuration: configuration)
        var state = FanoutState()
        var records: [FanoutRecord] = []
        for event in events {
            if let input = try InputEvent.decode(topic: event.topic, json: event.value).fanoutInput {
                records += stage.fold(&state, input).records
            }
        }
        records += stage.fold(&state, .endOfInput).records
        #expect(records.count > 5)
        for record in records {
            #expect(try InputEvent.decode(topic: Topic.fanout, value: CoreJSON.encode(record)) == .fanout(record))
        }
        let outcome = NotificationOutcome(
            id: "o1", at: "2026-11-22T12:00:00+09:00", commandId: "c", sink: "apns",
            recipient: Recipient(userId: "u", deviceId: "d", platform: .ios, provider: .apns),
            conversationId: "g", messageId: "m", outcome: .tokenInvalid, reason: "BadDeviceToken", token: "t")
        #expect(try InputEvent.decode(topic: Topic.outcomes, value: CoreJSON.encode(outcome)) == .outcome(outcome))
    }
}
