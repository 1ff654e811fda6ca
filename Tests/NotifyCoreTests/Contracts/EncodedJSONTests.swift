import Foundation
import Testing
@testable import NotifyCore

@Suite struct EncodedJSONTests {
    static let tree: JSONValue = .object([
        "title": .string("Ann \"A\""), "body": .string("土曜日 🏔️\n"), "badge": .int(3),
        "sender": .object(["id": .string("u1"), "isGroup": .bool(false)]), "tags": .array([.null, .string("x")]),
    ])

    @Test func theTreeAndItsBytesAreTheSameValue() throws {
        let fromTree = EncodedJSON(Self.tree)
        let fromBytes = EncodedJSON(canonical: CoreJSON.encode(Self.tree))
        #expect(fromTree == fromBytes)
        #expect(fromTree.hashValue == fromBytes.hashValue)
        #expect(fromBytes.value == Self.tree)
        #expect(fromTree.bytes == fromBytes.bytes)
        #expect(fromTree.encodedCount == fromBytes.encodedCount)
        #expect(fromBytes != EncodedJSON(.object(["title": .string("Ann")])))
    }

    @Test func codableWritesTheValueNotTheBytes() throws {
        let fromBytes = EncodedJSON(canonical: CoreJSON.encode(Self.tree))
        let data = try JSONEncoder().encode(fromBytes)
        #expect(try JSONDecoder().decode(JSONValue.self, from: data) == Self.tree)
        #expect(try JSONDecoder().decode(EncodedJSON.self, from: data) == fromBytes)
    }

    @Test func aWriterSplicesBytesAndWritesTrees() {
        var writer = JSONWriter()
        writer.writeObject { writer, first in
            writer.constantKey("a", &first)
            writer.write(EncodedJSON(canonical: CoreJSON.encode(Self.tree)))
            writer.constantKey("b", &first)
            writer.write(EncodedJSON(Self.tree))
        }
        #expect(writer.bytes == CoreJSON.encode(.object(["a": Self.tree, "b": Self.tree])))
    }

    /// A command whose renderings are set as trees (as sinks and tests build
    /// them) reads back and encodes exactly like one that carries bytes.
    @Test func aCommandReadsTheSameWhicheverFormItsRenderingsHave() {
        let recipient = Recipient(userId: "u1", deviceId: "d1", platform: .ios, provider: .apns)
        var built = NotificationCommand(
            id: "c1", at: "2026-11-22T00:00:00Z", path: .push, recipient: recipient, conversationId: "dm-1", messageId: "m1",
            expiresAt: "2026-11-23T00:00:00Z", content: EncodedJSON(canonical: CoreJSON.encode(Self.tree)),
            apns: APNsRendering(token: "t", headers: EncodedJSON(canonical: Array(#"{"apns-priority":"10"}"#.utf8)),
                                payload: EncodedJSON(canonical: CoreJSON.encode(Self.tree))))
        let fromTrees = NotificationCommand(
            id: "c1", at: "2026-11-22T00:00:00Z", path: .push, recipient: recipient, conversationId: "dm-1", messageId: "m1",
            expiresAt: "2026-11-23T00:00:00Z", content: Self.tree,
            apns: APNsRendering(token: "t", headers: ["apns-priority": "10"], payload: Self.tree))
        #expect(built == fromTrees)
        #expect(built.apns?.payload == Self.tree)
        #expect(built.apns?.headers == ["apns-priority": "10"])
        #expect(built.content["badge"] == .int(3))
        #expect(CoreJSON.encode(built) == CoreJSON.encode(fromTrees))
        #expect(CoreJSON.encode(built) == CoreJSON.encode(built.jsonValue))
        built.apns?.payload = .object(["aps": .object([:])])
        #expect(built.apns?.payloadJSON.bytes == Array(#"{"aps":{}}"#.utf8))
    }
}
