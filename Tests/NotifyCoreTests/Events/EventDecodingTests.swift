import Foundation
import Testing

@testable import NotifyCore

@Suite struct EventDecodingTests {
    func decodeError(_ topic: String, _ json: String) -> EventDecodingError? {
        do {
            _ = try InputEvent.decode(topic: topic, value: json.bytes)
            return nil
        } catch {
            return error
        }
    }

    @Test func errorsNameTheTopicTheFieldAndTheProblem() throws {
        let missing = try #require(
            decodeError(
                Topic.messages,
                #"{"type":"message.received","id":"e1","at":"2026-11-22T03:00:00Z","messageId":"m1","conversationId":"c1","kind":"text","text":"hi"}"#
            ))
        #expect(missing.topic == Topic.messages)
        #expect(missing.field == "senderId")
        #expect(missing.description == #"chat.messages: field "senderId": missing"#)

        let nested = try #require(
            decodeError(
                Topic.devices,
                #"{"type":"devices.updated","id":"e1","at":"2026-11-22T03:00:00Z","userId":"u","devices":[{"deviceId":"a","platform":"ios","provider":"apns","token":"t","appId":"x"},{"deviceId":"b","platform":"windows","provider":"fcm","token":"t","appId":"x"}]}"#
            ))
        #expect(nested.field == "devices[1].platform")
        #expect(nested.problem.contains("\"windows\" is not one of \"ios\", \"android\""))

        let time = try #require(
            decodeError(
                Topic.reads,
                #"{"type":"conversation.read","id":"e1","at":"yesterday","userId":"u","conversationId":"c"}"#))
        #expect(time.field == "at")
        #expect(time.problem.contains("RFC 3339"))
    }

    @Test func unknownTypesFieldsTopicsAndBadJSONAreErrors() throws {
        let type = try #require(
            decodeError(
                Topic.identities, #"{"type":"identity.created","id":"e","at":"2026-11-22T03:00:00Z","userId":"u"}"#))
        #expect(type.field == "type")
        #expect(type.problem.contains("\"identity.updated\" or \"identity.deleted\""))

        let field = try #require(
            decodeError(
                Topic.reads,
                #"{"type":"conversation.read","id":"e","at":"2026-11-22T03:00:00Z","userId":"u","conversationId":"c","extra":1}"#
            ))
        #expect(field.field == "extra")
        #expect(field.problem.hasPrefix("unknown field"))

        let topic = try #require(decodeError("chat.unknown", #"{"type":"x"}"#))
        #expect(topic.field == "(topic)")

        let syntax = try #require(decodeError(Topic.messages, #"{"type": "message.received", "id": }"#))
        #expect(syntax.field == "(value)")
        #expect(syntax.problem.contains("invalid JSON at byte"))

        let notObject = try #require(decodeError(Topic.messages, "[1,2]"))
        #expect(notObject.problem == "expected an object, got an array")
    }

    @Test func ruleDependentFieldsAreChecked() throws {
        let text = try #require(
            decodeError(
                Topic.messages,
                #"{"type":"message.received","id":"e","at":"2026-11-22T03:00:00Z","messageId":"m","conversationId":"c","senderId":"s","kind":"text","text":""}"#
            ))
        #expect(text.field == "text")
        let talkroom = try #require(
            decodeError(
                Topic.clientState,
                #"{"type":"client.state","id":"e","at":"2026-11-22T03:00:00Z","userId":"u","deviceId":"d","state":"foreground","screen":{"kind":"talkroom"}}"#
            ))
        #expect(talkroom.field == "screen.conversationId")
        let android = try #require(
            decodeError(
                Topic.devices,
                #"{"type":"devices.updated","id":"e","at":"2026-11-22T03:00:00Z","userId":"u","devices":[{"deviceId":"a","platform":"android","provider":"apns","token":"t","appId":"x"}]}"#
            ))
        #expect(android.field == "devices[0].provider")
    }

    @Test func everyEventRoundTripsThroughItsJSONAndCodableForms() throws {
        let events: [InputEvent] = [
            .message(
                MessageReceived(
                    id: "e1", at: EventTime(milliseconds: 1_000), messageId: "m", conversationId: "c", senderId: "s",
                    senderHandle: "h", kind: .image, text: "t",
                    attachment: Attachment(url: "https://x.example/a.jpg", mimeType: "image/jpeg", bytes: 10),
                    mentions: ["u"])),
            .preferences(
                PreferencesUpdated(
                    id: "e2", at: EventTime(milliseconds: 2_000), userId: "u", previews: .never,
                    muted: ["c": nil, "d": EventTime(milliseconds: 9_000)])),
            .clientState(
                ClientStateChanged(
                    id: "e3", at: EventTime(milliseconds: 3_000), userId: "u", deviceId: "d", state: .foreground,
                    screen: .init(kind: .talkroom, conversationId: "c"))),
        ]
        for event in events {
            let topic =
                switch event {
                case .message: Topic.messages
                case .preferences: Topic.preferences
                default: Topic.clientState
                }
            #expect(try InputEvent.decode(topic: topic, value: CoreJSON.encode(event.jsonValue)) == event)
        }
        let message = MessageReceived(
            id: "e", at: EventTime(milliseconds: 0), messageId: "m", conversationId: "c", senderId: "s", kind: .sticker)
        let data = try JSONEncoder().encode(message)
        #expect(try JSONDecoder().decode(MessageReceived.self, from: data) == message)
    }
}
