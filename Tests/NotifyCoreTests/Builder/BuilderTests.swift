import Crypto
import Foundation
import Testing

@testable import NotifyCore

@Suite struct BuilderTests {
    @Test(arguments: [
        String(repeating: "👨‍👩‍👧‍👦", count: 400), String(repeating: "🇯🇵🇫🇷", count: 500),
        String(repeating: "e\u{301}", count: 3000), String(repeating: "日本語のテキスト", count: 400),
        String(repeating: "\"\\\n", count: 2000),
    ])
    func shorteningCutsOnAGraphemeBoundaryAndFits(_ text: String) throws {
        let content = NotificationContent(
            title: "t", subtitle: nil, body: text, threadId: "c", category: "message",
            userInfo: NotificationUserInfo(talkroomId: "c", messageId: "m", senderId: "s"),
            sender: SenderIdentity(id: "s", displayName: "S"),
            conversation: ConversationIdentity(id: "c", isGroup: false),
            kind: .text, attachment: nil, identityResolved: true)
        let (fitted, rendered) = content.fitted { .object(["content": $0.jsonValue]) }
        #expect(CoreJSON.encode(rendered).count <= 4096)
        #expect(CoreJSON.encode(rendered).count > 4000, "shortened no more than needed")
        #expect(fitted.body.hasSuffix("…"))
        let kept = fitted.body.dropLast()
        #expect(Array(text).starts(with: Array(kept)), "the kept part is whole graphemes of the original")
    }

    /// The ids are SHA-256 of a label and the parts joined by 0x1F, worked out here with swift-crypto:
    /// the same inputs give the same id in every process and every version, other inputs another.
    @Test func idsDeriveFromTheirInputsAndTheApnsIdIsAVersion8UUID() {
        func sha256(_ parts: [String]) -> [UInt8] {
            Array(SHA256.hash(data: Array(parts.joined(separator: "\u{1F}").utf8)))
        }
        func hex(_ bytes: some Sequence<UInt8>) -> String {
            bytes.map { String(format: "%02x", $0) }.joined()
        }
        let id = DeterministicID.commandId(source: "m1", deviceId: "d1", path: .push)
        #expect(id == hex(sha256(["command", "m1", "d1", "push"]).prefix(16)))
        #expect(id != DeterministicID.commandId(source: "m1", deviceId: "d1", path: .local))
        #expect(id != DeterministicID.commandId(source: "m1", deviceId: "d2", path: .push))
        let fanoutId = DeterministicID.fanoutId(messageId: "m1", recipientId: "bob")
        #expect(fanoutId == hex(sha256(["fanout", "m1", "bob"]).prefix(16)))

        var uuid = sha256(["apns-id", id]).prefix(16)
        uuid[uuid.startIndex + 6] = uuid[uuid.startIndex + 6] & 0x0F | 0x80
        uuid[uuid.startIndex + 8] = uuid[uuid.startIndex + 8] & 0x3F | 0x80
        let digits = Array(hex(uuid))
        let expected = [0..<8, 8..<12, 12..<16, 16..<20, 20..<32].map { String(digits[$0]) }.joined(separator: "-")
        let apnsId = DeterministicID.apnsId(commandId: id)
        #expect(apnsId == expected)
        #expect(Array(apnsId)[14] == "8", "version 8")
        #expect("89ab".contains(Array(apnsId)[19]), "the RFC 9562 variant")
    }

    @Test func attachmentsAreAcceptedByDeclaredTypeAndSizePerPlatform() {
        func accepts(_ type: String, _ bytes: Int64, _ path: PlatformRules.AttachmentPath) -> Bool {
            PlatformRules.accepts(Attachment(url: "https://x.example/a", mimeType: type, bytes: bytes), on: path)
        }
        #expect(accepts("image/jpeg", 1_048_576, .androidImage))
        #expect(!accepts("image/jpeg", 1_048_577, .androidImage))
        #expect(!accepts("image/gif", 1000, .androidImage))
        #expect(accepts("image/gif", 10 * 1_048_576, .serviceExtension))
        #expect(!accepts("image/png", 10 * 1_048_576 + 1, .serviceExtension))
        #expect(accepts("video/mp4", 50 * 1_048_576, .serviceExtension))
        #expect(!accepts("audio/mpeg", 5 * 1_048_576 + 1, .serviceExtension))
        #expect(!accepts("image/heic", 1000, .serviceExtension))
        #expect(!accepts("application/pdf", 1000, .serviceExtension))
    }

    @Test func theValidatorFindsWhatThePlatformsRefuse() {
        let recipient = Recipient(userId: "u", deviceId: "d", platform: .ios, provider: .apns)
        let big = NotificationCommand(
            id: "c", at: "2026-11-22T00:00:00Z", path: .push, recipient: recipient, conversationId: nil, messageId: nil,
            expiresAt: "2026-11-22T00:00:00Z", content: .object([:]),
            apns: APNsRendering(
                token: "t",
                headers: [
                    "apns-push-type": "background", "apns-priority": "10",
                    "apns-collapse-id": String(repeating: "x", count: 65),
                ],
                payload: .object(["aps": .object([:]), "x": .string(String(repeating: "a", count: 5000))])))
        let problems = PlatformRules.violations(of: big)
        #expect(problems.contains { $0.contains("over 4096") })
        #expect(problems.contains { $0.contains("background push with apns-priority 10") })
        #expect(problems.contains { $0.contains("apns-collapse-id over 64") })

        let fcm = NotificationCommand(
            id: "c", at: "2026-11-22T00:00:00Z", path: .push,
            recipient: Recipient(userId: "u", deviceId: "d", platform: .ios, provider: .fcm),
            conversationId: nil, messageId: nil, expiresAt: "2026-11-22T00:00:00Z", content: .object([:]),
            fcm: FCMRendering(
                message: .object([
                    "token": .string("t"),
                    "data": .object(["badge": .int(1), "google.x": .string("y"), "from": .string("z")]),
                    "android": .object(["ttl": .string("2419201s")]),
                    "apns": .object([
                        "headers": .object(["apns-priority": .string("10")]), "payload": .object(["aps": .object([:])]),
                    ]),
                ])))
        let fcmProblems = PlatformRules.violations(of: fcm)
        #expect(fcmProblems.contains("fcm data \"badge\" is not a string"))
        #expect(fcmProblems.contains("fcm data key \"google.x\" is reserved"))
        #expect(fcmProblems.contains("fcm data key \"from\" is reserved"))
        #expect(fcmProblems.contains { $0.contains("android.ttl 2419201s") })
        #expect(fcmProblems.contains("fcm data-only message to iOS without apns-priority 5"))
    }
}
