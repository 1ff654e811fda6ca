import Foundation
import Testing

@testable import NotifyCore

/// Rule 14 over the schemas' full ranges: names of up to 256 characters, URLs of
/// up to 2,048, bodies of any length, in any script, with emoji and combining
/// marks. Every rendering fits, no body is empty, and the sender and the
/// conversation are the same on every path of one message.
@Suite struct PayloadBudgetTests {
    typealias Parts = RenderingPropertyTests.SharedParts

    /// Up to `maximum` Unicode scalars (what JSON Schema's maxLength counts), whole pieces only.
    static func text(_ generator: inout SeededGenerator, maximum: Int, minimum: Int = 0) -> String {
        let target = Int.random(in: minimum...maximum, using: &generator)
        var text = ""
        var scalars = 0
        while scalars < target {
            let piece = RenderingPropertyTests.pieces.randomElement(using: &generator)!
            if scalars + piece.unicodeScalars.count > maximum { break }
            text += piece
            scalars += piece.unicodeScalars.count
        }
        return text.isEmpty && minimum > 0 ? "x" : text
    }

    /// A URL the schema accepts (`^https?://[^\u0000-\u0020]+$`), up to 2,048 scalars, at the maximum half the time.
    static func url(_ generator: inout SeededGenerator) -> String? {
        guard Bool.random(using: &generator) else { return nil }
        let pieces = ["a", "/", "%20", "?q=", "\"", "\\", "日本", "🏔️", "-"]
        let target = Bool.random(using: &generator) ? 2048 : Int.random(in: 20...2048, using: &generator)
        var url = "https://cdn.example/"
        while true {
            let piece = pieces.randomElement(using: &generator)!
            if url.unicodeScalars.count + piece.unicodeScalars.count > target { break }
            url += piece
        }
        return url
    }

    static func name(_ generator: inout SeededGenerator) -> String {
        Bool.random(using: &generator)
            ? text(&generator, maximum: 256, minimum: 256) : text(&generator, maximum: 256, minimum: 1)
    }

    static func record(_ generator: inout SeededGenerator, configuration: CoreConfiguration) -> FanoutRecord {
        let kinds: [MessageKind] = [.text, .image, .video, .audio, .sticker, .file]
        let kind = kinds.randomElement(using: &generator)!
        let types = ["image/jpeg", "image/png", "image/bmp", "video/mp4", "audio/mpeg", "application/x-msdownload"]
        let attachment =
            kind.requiresAttachment || Bool.random(using: &generator)
            ? Attachment(
                url: url(&generator) ?? "https://cdn.example/a", mimeType: types.randomElement(using: &generator)!,
                bytes: Int64.random(in: 0...70_000_000, using: &generator))
            : nil
        let group = Bool.random(using: &generator)
        let conversation = ConversationUpdated(
            id: "c", at: EventFactory.time(0), conversationId: "conv-\(Int.random(in: 0...99, using: &generator))",
            kind: group ? .group : .direct, name: Bool.random(using: &generator) ? name(&generator) : nil,
            imageURL: url(&generator), members: ["s", "r"])
        let body = text(
            &generator, maximum: Bool.random(using: &generator) ? 6000 : 300, minimum: kind == .text ? 1 : 0)
        let message = MessageReceived(
            id: "e", at: EventFactory.time(Double.random(in: 0...100_000, using: &generator)),
            messageId: "m\(generator.next() % 10_000)",
            conversationId: conversation.conversationId, senderId: "sender-\(generator.next() % 1000)",
            senderHandle: Bool.random(using: &generator) ? name(&generator) : nil, kind: kind, text: body,
            attachment: attachment)
        let sender =
            Bool.random(using: &generator)
            ? IdentityUpdated(
                id: "i", at: EventFactory.time(0), userId: message.senderId, displayName: name(&generator),
                handle: Bool.random(using: &generator) ? name(&generator) : nil, imageURL: url(&generator))
            : nil
        var content = ContentBuilder(texts: configuration.texts).content(
            of: message, in: conversation, sender: sender?.senderIdentity)
        content.badge = Bool.random(using: &generator) ? Int.random(in: 0...Int.max, using: &generator) : nil
        return FanoutRecord(
            at: message.at, recipientId: "r", conversationId: conversation.conversationId, messageId: message.messageId,
            notificationType: Bool.random(using: &generator) ? "message" : "mention", content: content)
    }

    /// A recipient's devices as real platforms issue them: an APNs token of 64 hex digits, an FCM token of
    /// 163 characters, and one app id at the schema's 255 characters.
    static let devices: [(Device, DeliveryPath)] = {
        let fcmToken = String(repeating: "dGVzdA:APA91b", count: 13).prefix(163)
        let longAppId = String(repeating: "com.example.", count: 22).prefix(255)
        return [
            (
                Device(
                    deviceId: "i", platform: .ios, provider: .apns, token: String(repeating: "ab", count: 32),
                    appId: "com.example.chat"), .push
            ),
            (
                Device(
                    deviceId: "a", platform: .android, provider: .fcm, token: String(fcmToken),
                    appId: "com.example.chat"), .push
            ),
            (
                Device(
                    deviceId: "f", platform: .ios, provider: .fcm, token: String(fcmToken), appId: String(longAppId)),
                .push
            ),
            (
                Device(
                    deviceId: "l", platform: .ios, provider: .apns, token: String(repeating: "cd", count: 32),
                    appId: "com.example.chat"), .local
            ),
            (
                Device(
                    deviceId: "p", platform: .android, provider: .fcm, token: String(fcmToken),
                    appId: "com.example.chat"), .local
            ),
        ]
    }()

    @Test(arguments: 0..<8)
    func everyRenderingFitsWithABodyAndOneIdentity(_ batch: UInt64) throws {
        let configuration = try Repository.configuration()
        let builder = CommandBuilder(configuration: configuration)
        var generator = SeededGenerator(seed: 0xB0D6E7 + batch)
        var reduced = 0
        for round in 0..<40 {
            let record = Self.record(&generator, configuration: configuration)
            let label = "seed \(0xB0D6E7 + batch) round \(round)"
            // As the route stage does: one prepared message for all the recipient's devices.
            let prepared = builder.prepare(record, content: record.content)
            let commands = Self.devices.map { builder.messageCommand(prepared, device: $0.0, path: $0.1) }
            // A local delivery that bounces back to push is prepared again, and must say the same.
            let resent = builder.messageCommand(record, content: record.content, device: Self.devices[0].0, path: .push)
            let expected = Parts.local(commands[3].local)
            if expected.sender != record.content.sender.jsonValue
                || expected.conversation != record.content.conversation.jsonValue
            {
                reduced += 1
            }
            for command in commands + [resent] {
                let problems = PlatformRules.violations(of: command)
                #expect(problems.isEmpty, "\(label) \(command.recipient.deviceId): \(problems)")
                #expect(
                    Parts.local(.object(["content": command.content])) == expected,
                    "\(label): the command's content differs")
                if let local = command.local { #expect(Parts.local(local) == expected, "\(label): local differs") }
                if let payload = command.apns?.payload {
                    #expect(Parts.apns(payload) == expected, "\(label): apns differs")
                }
                if let message = command.fcm?.message {
                    #expect(try Parts.fcmData(message["data"]) == expected, "\(label): fcm data differs")
                    if let payload = message["apns"]?["payload"] {
                        #expect(Parts.apns(payload) == expected, "\(label): fcm apns differs")
                    }
                }
                let bodies = [
                    command.content["body"], command.apns?.payload["aps"]?["alert"]?["body"],
                    command.fcm?.message["notification"]?["body"],
                    command.fcm?.message["apns"]?["payload"]?["aps"]?["alert"]?["body"],
                ]
                for body in bodies.compactMap({ $0 }) {
                    #expect(body.stringValue?.isEmpty == false, "\(label): empty body")
                }
            }
        }
        #expect(reduced > 0, "the generator reached the budget's identity steps")
    }

    /// The budgeted commands are what `command.schema.json` describes (non-empty body, title and names), by an independent validator.
    @Test func budgetedCommandsMatchTheCommandSchema() async throws {
        let configuration = try Repository.configuration()
        let builder = CommandBuilder(configuration: configuration)
        var generator = SeededGenerator(seed: 0x5C4E3A)
        var items: [SchemaValidator.Item] = []
        for _ in 0..<40 {
            let record = Self.record(&generator, configuration: configuration)
            let prepared = builder.prepare(record, content: record.content)
            items += Self.devices.map {
                .init(
                    schema: "command.schema.json",
                    instance: builder.messageCommand(prepared, device: $0.0, path: $0.1).jsonValue)
            }
        }
        for (item, error) in zip(items, try await SchemaValidator.validate(items)) {
            #expect(error == nil, "\(item.instance["messageId"] ?? .null): \(error ?? "")")
        }
    }

    @Test(arguments: 0..<4)
    func contentThatSurelyFitsDoesFit(_ batch: UInt64) throws {
        let configuration = try Repository.configuration()
        let apns = APNsRenderer(texts: configuration.texts)
        let budget = PayloadBudget(apns: apns, fcm: FCMRenderer(apns: apns))
        var generator = SeededGenerator(seed: 0x5E7F17 + batch)
        var sure = 0
        for _ in 0..<200 {
            let record = RenderingPropertyTests.record(&generator, configuration: configuration)
            var content = record.content
            if Bool.random(using: &generator) { content.badge = Int.max }
            let policy = configuration.policies[record.notificationType]
            guard PayloadBudget.surelyFits(content, policy: policy) else { continue }
            sure += 1
            let size = budget.largestRendering(
                content, policy: policy, expiresAt: record.at.adding(seconds: policy.ttlSeconds))
            #expect(
                size <= PlatformRules.maximumPayloadBytes, "surely fits, but its largest rendering is \(size) bytes")
        }
        #expect(sure > 100)
    }

    /// The audit's cases: images of about 800 characters to an iPhone through FCM, and names and URLs at the schemas' maxima to APNs.
    @Test func theAuditsOversizedMessagesFitAndKeepWhatTheyCan() throws {
        let configuration = try Repository.configuration()
        let builder = CommandBuilder(configuration: configuration)
        var events = EventFactory()
        let image = "https://cdn.example/" + String(repeating: "p", count: 780)
        let conversation = ConversationUpdated(
            id: "c", at: EventFactory.time(0), conversationId: "g", kind: .group, name: "Hiking club",
            imageURL: image + "g", members: ["s", "r"])
        let message = events.message("m1", in: "g", from: "s", at: 1, text: String(repeating: "長い本文", count: 300))
        let sender = SenderIdentity(id: "s", displayName: "Sam", handle: "sam", imageURL: image + "s")
        let content = ContentBuilder(texts: configuration.texts).content(of: message, in: conversation, sender: sender)
        let record = FanoutRecord(
            at: message.at, recipientId: "r", conversationId: "g", messageId: "m1", notificationType: "message",
            content: content)
        let command = builder.messageCommand(
            record, content: content, device: EventFactory.iPhone("f", provider: .fcm), path: .push)
        #expect(PlatformRules.violations(of: command).isEmpty, "\(PlatformRules.violations(of: command))")
        let body = try #require(command.fcm?.message["notification"]?["body"]?.stringValue)
        #expect(body.hasPrefix("長い本文") && body.hasSuffix("…"))
        // The body went first; what else had to go is the same everywhere.
        #expect(command.content["sender"] == command.fcm?.message["apns"]?["payload"]?["sender"])

        let longName = String(repeating: "👨‍👩‍👧‍👦", count: 36) + "ab"
        let url = "https://cdn.example/" + String(repeating: "u", count: 2028)
        let full = ContentBuilder(texts: configuration.texts).content(
            of: events.message("m2", in: "g", from: "s", at: 2, text: String(repeating: "x", count: 5000)),
            in: ConversationUpdated(
                id: "c", at: EventFactory.time(0), conversationId: "g", kind: .group, name: longName, imageURL: url,
                members: ["s", "r"]),
            sender: SenderIdentity(id: "s", displayName: longName, handle: longName, imageURL: url))
        let fullRecord = FanoutRecord(
            at: EventFactory.time(2), recipientId: "r", conversationId: "g", messageId: "m2",
            notificationType: "message", content: full)
        for (device, path) in Self.devices {
            let command = builder.messageCommand(fullRecord, content: full, device: device, path: path)
            #expect(
                PlatformRules.violations(of: command).isEmpty,
                "\(device.deviceId): \(PlatformRules.violations(of: command))")
            #expect(command.content["sender"]?["imageURL"] == nil, "the images go before the names")
            #expect(command.content["sender"]?["displayName"]?.stringValue?.isEmpty == false)
        }
    }
}
