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
            id: "c1", at: "2026-11-22T00:00:00Z", path: .push, recipient: recipient, conversationId: "dm-1",
            messageId: "m1",
            expiresAt: "2026-11-23T00:00:00Z", content: EncodedJSON(canonical: CoreJSON.encode(Self.tree)),
            apns: APNsRendering(
                token: "t", headers: EncodedJSON(canonical: Array(#"{"apns-priority":"10"}"#.utf8)),
                payload: EncodedJSON(canonical: CoreJSON.encode(Self.tree))))
        let fromTrees = NotificationCommand(
            id: "c1", at: "2026-11-22T00:00:00Z", path: .push, recipient: recipient, conversationId: "dm-1",
            messageId: "m1",
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

@Suite struct CommandEncodingTests {
    /// The command writer writes into an array sized as if the envelope's strings
    /// needed no escaping; strings full of escapes overflow that estimate and
    /// must still give the bytes of the command's tree.
    @Test func envelopeStringsFullOfEscapesEncodeLikeTheTree() throws {
        let escaped = String(repeating: "\"\\\u{1}\n", count: 200)
        let command = NotificationCommand(
            id: escaped, at: "2026-11-22T00:00:00Z", path: .push,
            recipient: Recipient(userId: escaped, deviceId: "d\u{2}", platform: .ios, provider: .apns),
            conversationId: escaped, messageId: "m\"1", expiresAt: "2026-11-23T00:00:00Z",
            content: .object(["t": .string(escaped)]),
            apns: APNsRendering(token: escaped, headers: ["apns-id": "x\"y"], payload: .object(["aps": .object([:])])))
        let bytes = CoreJSON.encode(command)
        #expect(bytes == CoreJSON.encode(command.jsonValue))
        #expect(try CoreJSON.parse(bytes) == command.jsonValue)
    }

    @Test func aWriterThatOutgrowsABorrowedBufferKeepsWhatItWrote() {
        var storage = [UInt8](repeating: 0, count: 8)
        storage.withUnsafeMutableBufferPointer { buffer in
            var writer = JSONWriter(borrowing: buffer)
            writer.writeString("short")
            let borrowingWhileItFits = writer.isBorrowing
            writer.writeString(" and then much longer than eight bytes")
            let borrowingAfterwards = writer.isBorrowing
            let written = writer.bytes
            #expect(borrowingWhileItFits)
            #expect(!borrowingAfterwards)
            #expect(written == Array(#""short"" and then much longer than eight bytes""#.utf8))
        }
    }
}
