import Foundation
import Testing

@testable import NotifyCore

@Suite struct FanoutRecordTests {
    /// The fanout record writer takes shortcuts (constant keys, the content's identity parts
    /// written once); they must not change a byte of any record the golden scenarios make
    /// (attachments, badges, group subtitles, unresolved identities).
    @Test func writerGivesTheBytesOfTheRecordsJSONValue() throws {
        let configuration = try Repository.configuration()
        let stage = FanoutStage(configuration: configuration)
        var records: [FanoutRecord] = []
        let scenarios = Repository.jsonFiles(under: Repository.goldenSource.appendingPathComponent("scenarios"))
        #expect(!scenarios.isEmpty)
        for scenario in scenarios {
            var state = FanoutState()
            for event in try ScenarioRunner.events(of: Repository.bytes(scenario)) {
                guard let input = try InputEvent.decode(topic: event.topic, json: event.value).fanoutInput else {
                    continue
                }
                records += stage.fold(&state, input).records
            }
            records += stage.fold(&state, .endOfInput).records
        }
        #expect(records.contains { $0.content.attachment != nil })
        #expect(records.contains { !$0.content.identityResolved })
        for record in records {
            #expect(CoreJSON.encode(record) == CoreJSON.encode(record.jsonValue), "\(record.id)")
        }
    }

    /// A record with every optional member there, and texts that need escaping.
    static let full = FanoutRecord(
        at: EventTime(milliseconds: 1_795_000_000_123), recipientId: "u-2", conversationId: "c-1", messageId: "m-1",
        notificationType: "mention",
        content: NotificationContent(
            title: "Ana \"A\" Lima", subtitle: "Team 🎉", body: "line\none\ttab \\ é", threadId: "c-1",
            category: "MESSAGE", userInfo: NotificationUserInfo(talkroomId: "c-1", messageId: "m-1", senderId: "u-1"),
            sender: SenderIdentity(id: "u-1", displayName: "Ana", handle: "ana", imageURL: "https://img.example/a.png"),
            conversation: ConversationIdentity(
                id: "c-1", isGroup: true, name: "Team", imageURL: "https://img.example/c.png"),
            kind: .image, attachment: Attachment(url: "https://files.example/p.jpg", mimeType: "image/jpeg", bytes: 12),
            badge: 7, identityResolved: true),
        releasedAt: EventTime(milliseconds: 1_795_000_002_000), late: true)

    /// A record with no optional member.
    static let bare = FanoutRecord(
        at: EventTime(milliseconds: 1_795_000_000_000), recipientId: "u-2", conversationId: "c-1", messageId: "m-2",
        notificationType: "message",
        content: NotificationContent(
            title: "u-1", subtitle: nil, body: "hi", threadId: "c-1", category: "MESSAGE",
            userInfo: NotificationUserInfo(talkroomId: "c-1", messageId: "m-2", senderId: "u-1"),
            sender: SenderIdentity(id: "u-1", displayName: "u-1"),
            conversation: ConversationIdentity(id: "c-1", isGroup: false),
            kind: .text, attachment: nil, identityResolved: false))

    /// A record read, or why not.
    enum Reading: Equatable {
        case record(FanoutRecord)
        case failure(String)

        init(_ read: () throws -> InputEvent) {
            do {
                guard case .fanout(let record) = try read() else {
                    self = .failure("not a fanout record")
                    return
                }
                self = .record(record)
            } catch {
                self = .failure("\(error)")
            }
        }
    }

    /// What the general reading (a parsed value, read by name) makes of `bytes`.
    static func readTheGeneralWay(_ bytes: [UInt8]) -> Reading {
        Reading { try InputEvent.decode(topic: Topic.fanout, json: CoreJSON.parse(bytes)) }
    }

    /// What the pipeline's decoding makes of `bytes`.
    static func decode(_ bytes: [UInt8]) -> Reading {
        Reading { try InputEvent.decode(topic: Topic.fanout, value: bytes) }
    }

    /// Stage 2 reads the records stage 1 writes in one pass over their known layout; it must give
    /// the very record that was written, the one the general reading gives.
    @Test func recordsAsWrittenAreReadInOnePassToTheSameRecord() throws {
        for record in [Self.full, Self.bare] {
            let bytes = CoreJSON.encode(record)
            let read = bytes.withUnsafeBufferPointer(FanoutRecord.init(canonical:))
            #expect(read == record)
            #expect(read?.content.badge == record.content.badge)
            #expect(Self.decode(bytes) == .record(record))
            #expect(Self.readTheGeneralWay(bytes) == .record(record))
        }
    }

    /// Anything but the exact layout (other order, whitespace, nulls, `late: false`, or a value the
    /// general reading refuses) is left to the general reading: the same record, or the same error.
    @Test func otherLayoutsAndBadValuesGetWhatTheGeneralReadingGives() throws {
        let written = String(decoding: CoreJSON.encode(Self.full), as: UTF8.self)
        let variants: [(String, String)] = [
            (#""late":true"#, #""late":false"#),
            (#"{"at""#, #"{ "at""#),
            (#""handle":"ana""#, #""handle":null"#),
            (#""subtitle":"Team 🎉""#, #""subtitle":"""#),
            (#""body":"line\none\ttab \\ é""#, #""body":"""#),
            (#""imageURL":"https://img.example/a.png""#, #""imageURL":"ftp://img.example/a.png""#),
            (#""badge":7"#, #""badge":-1"#),
            (#""badge":7"#, #""badge":7.5"#),
            (#""badge":7"#, #""badge":"7""#),
            (#""kind":"image""#, #""kind":"gif""#),
            (#""mimeType":"image/jpeg""#, #""mimeType":"jpeg""#),
            (#""bytes":12"#, #""bytes":-12"#),
            (#""isGroup":true"#, #""isGroup":1"#),
            (#""identityResolved":true"#, #""identityResolved":"yes""#),
            (#""type":"notification.fanout""#, #""type":"notification.other""#),
            (#""type":"notification.fanout""#, #""extra":1,"type":"notification.fanout""#),
            (#""at":"2026"#, #""at":"not "#),
            (#""releasedAt":"2026"#, #""releasedAt":"later"#),
            (#""conversationId":"c-1","id""#, #""id""#),
        ]
        for (original, replacement) in variants {
            #expect(written.contains(original), "\(original)")
            let bytes = Array(written.replacingOccurrences(of: original, with: replacement).utf8)
            #expect(bytes.withUnsafeBufferPointer(FanoutRecord.init(canonical:)) == nil, "\(replacement)")
            #expect(Self.decode(bytes) == Self.readTheGeneralWay(bytes), "\(replacement)")
        }
        // Members in another order: the same record, read the general way.
        let reordered = Array(
            written.replacingOccurrences(of: #"{"at":"#, with: #"{"messageId":"m-1","at":"#)
                .replacingOccurrences(of: #","messageId":"m-1","notificationType""#, with: #","notificationType""#).utf8
        )
        #expect(reordered.withUnsafeBufferPointer(FanoutRecord.init(canonical:)) == nil)
        #expect(Self.decode(reordered) == .record(Self.full))
        // Bytes after the record: a syntax error, as before.
        guard case .failure(let problem) = Self.decode(Array((written + "x").utf8)) else {
            Issue.record("read a record with bytes after it")
            return
        }
        #expect(problem.contains("unexpected data after the value"))
    }
}
