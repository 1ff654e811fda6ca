import Foundation
import Testing

@testable import NotifyCore

@Suite struct CoreJSONTests {
    @Test func encodesWithSortedKeysAndNoWhitespace() {
        let value: JSONValue = .object([
            "b": .int(-12), "a": .array([.bool(true), .null, .double(1.5)]), "c": .string("x"),
        ])
        #expect(String(decoding: CoreJSON.encode(value), as: UTF8.self) == #"{"a":[true,null,1.5],"b":-12,"c":"x"}"#)
    }

    @Test func escapesQuotesBackslashesAndControlCharacters() throws {
        let text = "say \"hi\"\\\n\t\u{01}é🏔️"
        let encoded = CoreJSON.encode(.string(text))
        #expect(String(decoding: encoded, as: UTF8.self) == #""say \"hi\"\\\n\t\u0001é🏔️""#)
        #expect(CoreJSON.encodedLength(of: text) == encoded.count)
        #expect(try CoreJSON.parse(encoded) == .string(text))
    }

    @Test func anyStringSurvivesFoundationsParserWordByWord() throws {
        var generator = SeededGenerator(seed: 99)
        let alphabet: [Unicode.Scalar] = [
            "a", "\"", "\\", "\n", "\u{0}", "\u{1F}", " ", "~", "\u{7F}", "é", "日", "🏔", "/",
        ]
        for _ in 0..<2000 {
            let length = Int.random(in: 0...40, using: &generator)
            var text = ""
            for _ in 0..<length { text.unicodeScalars.append(alphabet.randomElement(using: &generator)!) }
            let encoded = CoreJSON.encode(.array([.string(text)]))
            let parsed = try JSONSerialization.jsonObject(with: Data(encoded)) as? [String]
            #expect(parsed == [text], "\(text.debugDescription)")
            #expect(CoreJSON.encodedLength(of: text) == encoded.count - 2)
        }
    }

    @Test func encodedLengthMatchesTheEncoding() {
        let value: JSONValue = .object([
            "k": .array([.int(0), .int(123_456), .string("日本語\"")]), "e": .object([:]), "f": .array([]),
        ])
        #expect(CoreJSON.encodedLength(value) == CoreJSON.encode(value).count)
    }

    /// The command writer takes shortcuts (constant keys, the content's bytes
    /// reused for a local rendering that wraps it); they must not change a byte.
    @Test(arguments: [true, false])
    func commandWriterGivesTheBytesOfTheCommandsJSONValue(localWrapsContent: Bool) {
        let content: JSONValue = .object(["title": .string("Ann \"A\""), "body": .string("土曜日 🏔️\n"), "badge": .int(3)])
        let local: JSONValue =
            localWrapsContent
            ? .object(["content": content]) : .object(["content": .object(["title": .string("other")])])
        let command = NotificationCommand(
            id: "c1", at: "2026-11-22T00:00:00.250Z", path: .local,
            recipient: Recipient(userId: "u1", deviceId: "d1", platform: .ios, provider: .apns),
            conversationId: "dm-1", messageId: "m1", expiresAt: "2026-11-23T00:00:00Z", content: content, local: local)
        #expect(CoreJSON.encode(command) == CoreJSON.encode(command.jsonValue))
    }

    @Test func parsesWhatFoundationWrites() throws {
        let value: JSONValue = .object([
            "text": .string("\u{1F600} \\u escapes / ok"), "n": .int(Int64.max), "d": .double(-0.25),
        ])
        let data = try JSONEncoder().encode(value)
        #expect(try CoreJSON.parse([UInt8](data)) == value)
        #expect(try CoreJSON.parse(#""\ud83d\ude00""#) == .string("\u{1F600}"))
    }

    @Test(arguments: [
        ("{\"a\":1,}", "expected a member name"), ("[1 2]", "expected ',' or ']'"),
        ("{\"a\":1,\"a\":2}", "duplicate member"),
        ("\"\\ud800\"", "unpaired surrogate"), ("01", "unexpected data"), ("{\"a\":tru}", "invalid literal"),
        ("", "unexpected end"),
        ("\"abc", "unterminated string"), ("-", "invalid number"), ("1.", "expected digits"),
    ])
    func refusesMalformedJSONSayingWhere(_ input: String, _ problem: String) {
        let error = #expect(throws: JSONSyntaxError.self) { try CoreJSON.parse(input) }
        #expect(error?.problem.contains(problem) == true, "\(String(describing: error))")
    }

    @Test func membersWhoseNamesShareASignatureAreToldApart() throws {
        // The same length, first four and last three bytes: one signature, three names.
        let document = try CoreJSON.parseMembers(Array(#"{"abcdXefg":1,"abcdYefg":2,"id":"x"}"#.utf8))
        let fields = try FieldReader(document)
        #expect(fields.optionalValue("abcdXefg") == .int(1))
        #expect(fields.optionalValue("abcdYefg") == .int(2))
        #expect(fields.optionalValue("abcdZefg") == nil)
        #expect(throws: Never.self) { try fields.rejectUnknown(allowed: ["id", "abcdYefg", "abcdXefg"]) }
        let unknown = #expect(throws: FieldError.self) {
            try fields.rejectUnknown(allowed: ["id", "abcdXefg", "abcdZefg"])
        }
        #expect(unknown?.field == "abcdYefg")
        let duplicate = #expect(throws: JSONSyntaxError.self) {
            try CoreJSON.parseMembers(Array(#"{"abcdXefg":1,"abcdYefg":2,"abcdXefg":3}"#.utf8))
        }
        #expect(duplicate?.problem.contains("duplicate member \"abcdXefg\"") == true)
    }

    @Test func nestedObjectsOfADocumentReadAsTheirValues() throws {
        let text = #"{"content":{"sender":{"id":"u1","tags":[{"k":1}]},"body":"hi","none":null},"n":2}"#
        let document = try CoreJSON.parseMembers(Array(text.utf8))
        let fields = try FieldReader(document)
        let parsed = try CoreJSON.parse(text)
        // Kept as members, asked for as a value: the same as the dictionary the value parser builds.
        #expect(fields.optionalValue("content") == parsed["content"])
        let content = try fields.object("content")
        #expect(try content.object("sender").string("id") == "u1")
        #expect(try content.optionalObject("none") == nil)
        #expect(try content.optionalObject("absent") == nil)
        #expect(content.optionalValue("sender") == parsed["content"]?["sender"])
        let notAnObject = #expect(throws: FieldError.self) { try content.object("body") }
        #expect(notAnObject?.field == "content.body")
        let missing = #expect(throws: FieldError.self) { try content.object("none") }
        #expect(missing?.field == "content.none")
        #expect(missing?.problem == "missing")
        let duplicate = #expect(throws: JSONSyntaxError.self) {
            try CoreJSON.parseMembers(Array(#"{"content":{"sender":{"id":"a","id":"b"}}}"#.utf8))
        }
        #expect(duplicate?.problem.contains("duplicate member \"id\"") == true)
        #expect(throws: JSONSyntaxError.self) {
            try CoreJSON.parseMembers(
                Array((String(repeating: #"{"a":"#, count: 100) + "1" + String(repeating: "}", count: 100)).utf8))
        }
    }

    @Test func refusesNestingDeeperThanTheLimit() {
        #expect(throws: JSONSyntaxError.self) {
            try CoreJSON.parse(String(repeating: "[", count: 100) + String(repeating: "]", count: 100))
        }
    }
}

@Suite struct EventTimeTests {
    @Test func parsesRFC3339WithOffsetsAndFractions() throws {
        let utc = try #require(EventTime(rfc3339: "2026-11-22T03:00:00Z"))
        #expect(EventTime(rfc3339: "2026-11-22T12:00:00+09:00") == utc)
        #expect(EventTime(rfc3339: "2026-11-21T22:30:00-04:30") == utc)
        #expect(EventTime(rfc3339: "2026-11-22T03:00:00.25Z")?.milliseconds == utc.milliseconds + 250)
        #expect(EventTime(rfc3339: "1970-01-01T00:00:00Z")?.milliseconds == 0)
        #expect(EventTime(rfc3339: "2024-02-29T00:00:00Z") != nil)
    }

    @Test(arguments: [
        "2026-11-22 03:00:00Z", "2026-11-22T03:00:00", "2026-13-01T00:00:00Z", "2025-02-29T00:00:00Z",
        "2026-11-22T24:00:00Z", "2026-11-22T03:00:00.Z", "22/11/2026", "2026-11-22T03:00:00+0900",
    ])
    func refusesWhatIsNotRFC3339(_ text: String) {
        #expect(EventTime(rfc3339: text) == nil)
    }

    @Test func formatsInUTCAndAgreesWithFoundation() throws {
        var generator = SeededGenerator(seed: 7)
        let formatter = ISO8601DateFormatter()
        for _ in 0..<500 {
            let seconds = Int64.random(in: -2_000_000_000...4_000_000_000, using: &generator)
            let time = EventTime(milliseconds: seconds * 1000)
            #expect(time.rfc3339 == formatter.string(from: Date(timeIntervalSince1970: TimeInterval(seconds))))
            #expect(EventTime(rfc3339: time.rfc3339) == time)
        }
        #expect(EventTime(milliseconds: 1_500).rfc3339 == "1970-01-01T00:00:01.500Z")
        #expect(EventTime(milliseconds: 1_500).unixSeconds == 1)
    }
}
