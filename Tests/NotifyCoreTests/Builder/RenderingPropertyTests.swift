import Foundation
import Testing

@testable import NotifyCore

/// Properties over generated messages, recipients and devices (a seeded
/// generator, so a failure names a reproducible seed).
@Suite struct RenderingPropertyTests {
    /// The parts every rendering must carry identically.
    struct SharedParts: Equatable, CustomStringConvertible {
        var sender: JSONValue?
        var conversation: JSONValue?
        var threadId: JSONValue?
        var category: JSONValue?
        var userInfo: [String: JSONValue?]

        var description: String {
            "sender \(String(describing: sender)) conversation \(String(describing: conversation)) thread \(String(describing: threadId)) category \(String(describing: category)) userInfo \(userInfo)"
        }

        static func apns(_ payload: JSONValue) -> SharedParts {
            SharedParts(
                sender: payload["sender"], conversation: payload["conversation"],
                threadId: payload["aps"]?["thread-id"],
                category: payload["aps"]?["category"],
                userInfo: [
                    "talkroom-id": payload["talkroom-id"], "message-id": payload["message-id"],
                    "sender-id": payload["sender-id"],
                ])
        }

        static func fcmData(_ data: JSONValue?) throws -> SharedParts {
            SharedParts(
                sender: try data?["sender"]?.stringValue.map { try CoreJSON.parse($0) },
                conversation: try data?["conversation"]?.stringValue.map { try CoreJSON.parse($0) },
                threadId: data?["thread-id"], category: data?["category"],
                userInfo: [
                    "talkroom-id": data?["talkroom-id"], "message-id": data?["message-id"],
                    "sender-id": data?["sender-id"],
                ])
        }

        static func local(_ local: JSONValue?) -> SharedParts {
            let content = local?["content"]
            return SharedParts(
                sender: content?["sender"], conversation: content?["conversation"], threadId: content?["threadId"],
                category: content?["category"],
                userInfo: [
                    "talkroom-id": content?["userInfo"]?["talkroom-id"],
                    "message-id": content?["userInfo"]?["message-id"],
                    "sender-id": content?["userInfo"]?["sender-id"],
                ])
        }
    }

    static let pieces = [
        "a", "Z", " ", "hello ", "\"", "\\", "\n", "\t", "\u{7}", "日本", "語", "🏔️", "👨‍👩‍👧‍👦", "🇯🇵", "e\u{301}", "😀", "…", "한국어",
        "ñ",
    ]

    static func text(_ generator: inout SeededGenerator, maximum: Int) -> String {
        let count = Int.random(in: 0...maximum, using: &generator)
        var text = ""
        for _ in 0..<count { text += pieces.randomElement(using: &generator)! }
        return text
    }

    static func nonEmpty(_ generator: inout SeededGenerator, maximum: Int) -> String {
        let text = text(&generator, maximum: maximum)
        return text.isEmpty ? "x" : text
    }

    static func record(_ generator: inout SeededGenerator, configuration: CoreConfiguration) -> FanoutRecord {
        let kinds: [MessageKind] = [.text, .image, .video, .audio, .sticker, .file]
        let kind = kinds.randomElement(using: &generator)!
        let types = [
            "image/jpeg", "image/png", "image/gif", "image/heic", "video/mp4", "audio/mpeg", "application/pdf",
        ]
        let attachment =
            kind.requiresAttachment || Bool.random(using: &generator)
            ? Attachment(
                url: "https://cdn.example/\(Int.random(in: 0...999, using: &generator))",
                mimeType: types.randomElement(using: &generator)!,
                bytes: Int64.random(in: 0...60_000_000, using: &generator))
            : nil
        let group = Bool.random(using: &generator)
        let conversation = ConversationUpdated(
            id: "c", at: EventFactory.time(0), conversationId: "conv-\(Int.random(in: 0...99, using: &generator))",
            kind: group ? .group : .direct,
            name: group && Bool.random(using: &generator) ? nonEmpty(&generator, maximum: 40) : nil,
            imageURL: Bool.random(using: &generator) ? "https://cdn.example/g.png" : nil, members: ["s", "r"])
        let longText = Int.random(in: 0...4, using: &generator) == 0
        let message = MessageReceived(
            id: "e", at: EventFactory.time(Double.random(in: 0...100_000, using: &generator)),
            messageId: "m\(generator.next() % 10_000)",
            conversationId: conversation.conversationId, senderId: "s",
            senderHandle: Bool.random(using: &generator) ? "handle" : nil,
            kind: kind,
            text: kind == .text
                ? nonEmpty(&generator, maximum: longText ? 3000 : 30) : text(&generator, maximum: longText ? 3000 : 10),
            attachment: attachment)
        let sender =
            Bool.random(using: &generator)
            ? IdentityUpdated(
                id: "i", at: EventFactory.time(0), userId: "s", displayName: nonEmpty(&generator, maximum: 60),
                handle: Bool.random(using: &generator) ? "h" : nil,
                imageURL: Bool.random(using: &generator) ? "https://cdn.example/s.png" : nil)
            : nil
        var content = ContentBuilder(texts: configuration.texts).content(
            of: message, in: conversation, sender: sender?.senderIdentity)
        content.badge = Bool.random(using: &generator) ? Int.random(in: 0...100_000, using: &generator) : nil
        return FanoutRecord(
            at: message.at, recipientId: "r", conversationId: conversation.conversationId, messageId: message.messageId,
            notificationType: Bool.random(using: &generator) ? "message" : "mention", content: content)
    }

    @Test(arguments: 0..<8)
    func everyRenderingCarriesTheSamePartsWithinTheLimitsAndTheSameBytesTwice(_ batch: UInt64) throws {
        let configuration = try Repository.configuration()
        let builder = CommandBuilder(configuration: configuration)
        var generator = SeededGenerator(seed: 0x5EED + batch)
        for round in 0..<60 {
            let record = Self.record(&generator, configuration: configuration)
            func render(_ device: Device, _ path: DeliveryPath) -> NotificationCommand {
                builder.messageCommand(record, content: record.content, device: device, path: path)
            }
            let devices = [
                (EventFactory.iPhone("i"), DeliveryPath.push), (EventFactory.pixel("a"), .push),
                (EventFactory.iPhone("f", provider: .fcm), .push), (EventFactory.iPhone("l"), .local),
            ]
            let commands = devices.map { render($0.0, $0.1) }
            let (apns, android, iosFCM, local) = (commands[0], commands[1], commands[2], commands[3])
            let label = "seed \(0x5EED + batch) round \(round)"

            let expected = SharedParts.local(local.local)
            #expect(expected.sender == record.content.sender.jsonValue, "\(label)")
            #expect(expected.conversation == record.content.conversation.jsonValue, "\(label)")
            let apnsPayload = try #require(apns.apns?.payload)
            let iosPayload = try #require(iosFCM.fcm?.message["apns"]?["payload"])
            for (name, parts) in [
                ("apns", SharedParts.apns(apnsPayload)),
                ("fcm android", try SharedParts.fcmData(android.fcm?.message["data"])),
                ("fcm ios data", try SharedParts.fcmData(iosFCM.fcm?.message["data"])),
                ("fcm ios apns", SharedParts.apns(iosPayload)),
            ] {
                #expect(parts == expected, "\(label) \(name): \(parts) != \(expected)")
            }

            // What a body may be before shortening: the text, or what was sent when the attachment was dropped,
            // on Android after the sender's name.
            let original = record.content.body
            let described = configuration.texts.sentDescription(record.content.kind)
            let prefixes = [""] + (record.content.subtitle.map { [$0 + ": "] } ?? [])
            let candidates = prefixes.flatMap { [$0 + original, $0 + described + ": " + original, $0 + described] }
            for ((device, path), command) in zip(devices, commands) {
                #expect(
                    PlatformRules.violations(of: command).isEmpty, "\(label): \(PlatformRules.violations(of: command))")
                #expect(
                    CoreJSON.encode(command) == CoreJSON.encode(render(device, path)),
                    "\(label): rendering twice differs")
                #expect(
                    CoreJSON.encode(command) == CoreJSON.encode(command.jsonValue),
                    "\(label): the direct writer and the tree differ")
                #expect(
                    try JSONDecoder().decode(NotificationCommand.self, from: Data(CoreJSON.encode(command))) == command,
                    "\(label): the sinks' Codable decoding does not give the command back")
                let body =
                    (command.apns?.payload["aps"]?["alert"]?["body"] ?? command.fcm?.message["notification"]?["body"]
                    ?? command.local?["content"]?["body"])?.stringValue ?? ""
                #expect(!body.isEmpty, "\(label): empty body")
                if candidates.contains(body) { continue }
                #expect(body.hasSuffix("…"), "\(label): unexpected body \(body.prefix(80))")
                let kept = Array(body.dropLast())
                #expect(
                    candidates.contains { Array($0).starts(with: kept) },
                    "\(label): \(body.prefix(80)) is not a grapheme prefix")
            }
        }
    }

    @Test(arguments: 0..<4)
    func aGeneratedScenarioGivesTheSameBytesEveryRun(_ seed: UInt64) throws {
        var generator = SeededGenerator(seed: 0xC0FFEE + seed)
        var events = EventFactory()
        var scenario: [ScenarioRunner.Event] = []
        let users = (0..<6).map { "u\($0)" }
        for user in users where Bool.random(using: &generator) {
            scenario.append(
                .init(topic: Topic.identities, value: events.identity(user, "Name \(user)", at: 0).jsonValue))
        }
        for index in 0..<3 {
            let members = users.filter { _ in Bool.random(using: &generator) }
            scenario.append(
                .init(
                    topic: Topic.conversations,
                    value: events.conversation("c\(index)", members.isEmpty ? ["u0"] : members, group: index > 0)
                        .jsonValue))
        }
        for user in users {
            scenario.append(
                .init(
                    topic: Topic.devices,
                    value: events.devices(
                        user,
                        [
                            EventFactory.iPhone("\(user)-i"), EventFactory.pixel("\(user)-a"),
                            EventFactory.iPhone("\(user)-f", provider: .fcm),
                        ]
                    ).jsonValue))
        }
        var time = 1.0
        for index in 0..<80 {
            time += Double.random(in: 0...1.5, using: &generator)
            let user = users.randomElement(using: &generator)!
            let conversation = "c\(Int.random(in: 0..<3, using: &generator))"
            switch Int.random(in: 0..<10, using: &generator) {
            case 0..<6:
                scenario.append(
                    .init(
                        topic: Topic.messages,
                        value: events.message(
                            "m\(index)", in: conversation, from: user, at: time,
                            text: Self.nonEmpty(&generator, maximum: 40)
                        ).jsonValue))
            case 6:
                scenario.append(
                    .init(topic: Topic.identities, value: events.identity(user, "Late \(user)", at: time).jsonValue))
            case 7:
                scenario.append(.init(topic: Topic.reads, value: events.read(user, conversation, at: time).jsonValue))
            default:
                let screens: [ClientStateChanged.Screen?] = [
                    nil, .init(kind: .tabbar), .init(kind: .talkroom, conversationId: conversation),
                    .init(kind: .other),
                ]
                let state: ClientStateChanged.AppState = Bool.random(using: &generator) ? .foreground : .background
                scenario.append(
                    .init(
                        topic: Topic.clientState,
                        value: events.client(
                            user, "\(user)-i", state, screens.randomElement(using: &generator)!, at: time
                        ).jsonValue))
            }
        }
        let runner = ScenarioRunner(configuration: try Repository.configuration())
        let first = runner.run(events: scenario)
        let second = runner.run(events: scenario)
        #expect(first.rejections.isEmpty)
        #expect(!first.commands.isEmpty)
        #expect(first.commands.map { CoreJSON.encode($0) } == second.commands.map { CoreJSON.encode($0) })
        #expect(first.decisions == second.decisions)
        for command in first.commands {
            #expect(PlatformRules.violations(of: command).isEmpty)
        }
        // Rule 1: per conversation and device, message commands come out in message order.
        var lastIndex: [String: Int] = [:]
        for command in first.commands {
            guard let messageId = command.messageId, let index = Int(messageId.dropFirst()) else { continue }
            let key = "\(command.conversationId ?? "")|\(command.recipient.deviceId)|\(command.path)"
            #expect(index > lastIndex[key, default: -1], "out of order: \(messageId) for \(key)")
            lastIndex[key] = index
        }
    }
}
