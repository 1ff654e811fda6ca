import Foundation
import Testing

/// `--log-format json` on real `notify` processes: every line on standard error is a JSON object with
/// the documented fields, from notify, librdkafka and the libraries alike.
@Suite struct JSONLogTests {
    static let levels: Set<String> = ["trace", "debug", "info", "notice", "warning", "error", "critical"]

    /// Each line parsed, and the lines that are not JSON objects with the required fields of the
    /// right types, each with the first field found wanting.
    static func check(_ lines: [String]) -> (objects: [[String: Any]], refused: [String]) {
        var objects: [[String: Any]] = []
        var refused: [String] = []
        for line in lines {
            guard let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any] else {
                refused.append("not a JSON object: \(line)")
                continue
            }
            let timestamp = object["timestamp"] as? String
            if timestamp?.wholeMatch(of: /\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z/) == nil {
                refused.append("timestamp: \(line)")
            }
            if !levels.contains(object["level"] as? String ?? "") { refused.append("level: \(line)") }
            if object["logger"] as? String == nil { refused.append("logger: \(line)") }
            if object["message"] as? String == nil { refused.append("message: \(line)") }
            if object["metadata"] as? [String: Any] == nil { refused.append("metadata: \(line)") }
            if object["source"] as? String == nil { refused.append("source: \(line)") }
            objects.append(object)
        }
        return (objects, refused)
    }

    /// Each line parsed, or an issue naming the first lines ``check(_:)`` refuses.
    static func parse(_ lines: [String]) -> [[String: Any]] {
        let (objects, refused) = check(lines)
        #expect(
            refused.isEmpty,
            "\(refused.count) of \(lines.count) lines refused, the first: \(refused.prefix(5).joined(separator: "\n"))")
        return objects
    }

    /// `notify dev` at debug level with librdkafka's consumer-group debugging on: the embedded broker,
    /// both stages, the sinks and the demo all log; standard output keeps its readable lines.
    @Test func everyLineOfADevRunIsJSON() async throws {
        let dev = try NotifyProcess(
            [
                "dev", "--broker-port", "0", "--http-listen", "127.0.0.1:0", "--inapp-listen", "127.0.0.1:0",
                "--log-format", "json",
                "--set", "log.level=debug", "--set", "kafka.properties=debug=cgrp",
            ], separateStandardError: true)
        defer { dev.kill() }
        try await dev.waitForLine { $0.contains("demo ") && $0.contains("events of") }
        try await dev.waitForLine { $0.hasPrefix("  delivered   push → ") }
        let (_, status) = try await dev.terminate()
        #expect(status == 0)
        try await dev.waitForErrorOutputEnd()

        let lines = dev.errorOutput
        let objects = Self.parse(lines)
        #expect(objects.count >= 200, "only \(objects.count) lines: \(lines.prefix(20))")
        // notify's own lines: a decision of the demo, at info.
        #expect(
            objects.contains {
                $0["logger"] as? String == "notify.dev" && $0["source"] as? String == "NotifyCLI"
                    && $0["level"] as? String == "info"
            },
            "\(lines.prefix(20))")
        // librdkafka's lines, through the client's logger.
        let librdkafka = objects.filter { ($0["metadata"] as? [String: Any])?["librdkafka.facility"] != nil }
        #expect(!librdkafka.isEmpty)
        #expect(librdkafka.allSatisfy { $0["source"] as? String == "NotifyKafka" })
        // The libraries': the service lifecycle's and the HTTP server's.
        let sources = Set(objects.compactMap { $0["source"] as? String })
        #expect(
            sources.isSuperset(of: ["NotifyCLI", "NotifyKafka", "ServiceLifecycle", "HummingbirdCore"]),
            "\(sources.sorted())")
        // Standard output keeps its readable lines, and no log line.
        #expect(dev.standardOutput.contains { $0.hasPrefix("  console     http://") })
        #expect(!dev.standardOutput.contains { $0.hasPrefix("{") })
    }

    /// The check itself: a plain-text line, or an object without a required field, fails the test.
    @Test func theCheckRefusesLinesThatAreNotJSONLogLines() {
        let good =
            #"{"timestamp":"2026-05-04T10:00:00.000001Z","level":"info","logger":"notify","message":"m","metadata":{},"source":"NotifyCLI"}"#
        #expect(Self.check([good]).refused.isEmpty)
        #expect(
            Self.check([good, "2026-05-04T10:00:00+0000 info notify.pipeline: [NotifyCLI] plain text"]).refused.count
                == 1)
        let secondsOnly =
            #"{"timestamp":"2026-05-04T10:00:00Z","level":"info","logger":"notify","message":"m","metadata":{},"source":"S"}"#
        #expect(Self.check([secondsOnly]).refused.map { $0.prefix(10) } == ["timestamp:"])
        let upperCase =
            #"{"timestamp":"2026-05-04T10:00:00.000001Z","level":"INFO","logger":"notify","message":"m","metadata":{},"source":"S"}"#
        #expect(Self.check([upperCase]).refused.map { $0.prefix(6) } == ["level:"])
        let noMetadata =
            #"{"timestamp":"2026-05-04T10:00:00.000001Z","level":"info","logger":"notify","message":"m","source":"S"}"#
        #expect(Self.check([noMetadata]).refused.map { $0.prefix(9) } == ["metadata:"])
    }

    /// A command that fails once it logs in JSON reports its error as a JSON line too, with its exit status.
    @Test func theErrorThatEndsACommandIsAJSONLine() async throws {
        let pipeline = try NotifyProcess(
            [
                "pipeline", "--bootstrap", "127.0.0.1:9", "--connect-timeout", "1", "--http-listen", "127.0.0.1:0",
                "--log-format", "json",
            ], separateStandardError: true)
        defer { pipeline.kill() }
        #expect(try await pipeline.exitStatus(timeout: .seconds(20)) == 1)
        try await pipeline.waitForErrorOutputEnd()
        let objects = Self.parse(pipeline.errorOutput)
        let last = try #require(objects.last)
        #expect(last["level"] as? String == "critical")
        #expect(
            (last["message"] as? String)?.contains("no Kafka broker answered at 127.0.0.1:9 (--bootstrap) within 1 s")
                == true, "\(last)")
        #expect((last["metadata"] as? [String: String])?["exit_status"] == "1")
    }

    /// A format other than text or json is refused before anything starts, naming the allowed values,
    /// whether it comes from the flag or the environment, with settings or without.
    @Test(
        arguments: [
            (
                ["pipeline", "--log-format", "xml"], [:],
                #"flag --log-format: log.format: invalid value: "xml" is not one of text, json"#
            ),
            (
                ["sink", "--kind", "jsonl", "--log-format", "jsonl"], [:],
                #"flag --log-format: log.format: invalid value: "jsonl" is not one of text, json; did you mean "json"?"#
            ),
            (
                ["broker", "--log-format", "xml"], [:],
                #"flag --log-format: log.format: invalid value: "xml" is not one of text, json"#
            ),
            (
                ["broker"], ["NOTIFY_LOG_FORMAT": "xml"],
                #"environment variable NOTIFY_LOG_FORMAT: log.format: invalid value: "xml" is not one of text, json"#
            ),
            (
                ["pipeline", "--set", "log.format=xml"], [:],
                #"flag --set log.format: log.format: invalid value: "xml" is not one of text, json"#
            ),
        ] as [([String], [String: String], String)])
    func aBadFormatIsRefusedWithTheAllowedValues(arguments: [String], environment: [String: String], message: String)
        async throws
    {
        let process = try NotifyProcess(arguments, environment: environment)
        defer { process.kill() }
        #expect(try await process.exitStatus(timeout: .seconds(20)) != 0)
        #expect(process.output.contains { $0.contains(message) }, "\(process.output)")
    }
}
