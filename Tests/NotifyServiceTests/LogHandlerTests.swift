import Foundation
import Logging
import NotifyTestSupport
import OTel
import Synchronization
import Testing
import Tracing

@testable import NotifyService

/// The lines a handler wrote.
private final class CapturedLines: Sendable {
    private let lines = Mutex<[[UInt8]]>([])

    var output: LogOutput {
        LogOutput { line in self.lines.withLock { $0.append(line) } }
    }

    var all: [[UInt8]] { lines.withLock { $0 } }
    var texts: [String] { all.map { String(decoding: $0, as: UTF8.self) } }

    /// Each line parsed as a JSON object.
    func objects() throws -> [[String: Any]] {
        try all.map { line in
            try #require(
                JSONSerialization.jsonObject(with: Data(line)) as? [String: Any],
                "not a JSON object: \(String(decoding: line, as: UTF8.self))")
        }
    }
}

/// A logger whose handler is `format`'s, writing into `captured`, at trace level.
private func logger(
    _ format: LogFormat, into captured: CapturedLines, label: String = "notify.test",
    provider: Logger.MetadataProvider? = nil
) -> Logger {
    Logger(label: label) { label in
        NotifyLogging.handler(
            label: label, format: format, level: .trace, metadataProvider: provider, output: captured.output)
    }
}

/// A metadata provider as a tracer's (swift-otel's `OTel.makeLoggingMetadataProvider()`) gives while a span is active.
private let tracing = Logger.MetadataProvider {
    ["trace_id": "4bf92f3577b34da6a3ce929d0e0e4736", "span_id": "00f067aa0ba902b7", "trace_flags": "1"]
}

@Suite("JSON log lines: one object per line, escaped, with metadata and trace ids")
struct JSONLogHandlerTests {
    @Test("every line is one JSON object with the required fields, ended by one newline")
    func requiredFields() throws {
        let captured = CapturedLines()
        logger(.json, into: captured, label: "notify.pipeline").info("Stage fanout joined group notify.fanout")
        let line = try #require(captured.all.first)
        #expect(line.last == 0x0A)
        #expect(line.dropLast().contains(0x0A) == false)
        let object = try #require(try captured.objects().first)
        #expect(object["level"] as? String == "info")
        #expect(object["logger"] as? String == "notify.pipeline")
        #expect(object["message"] as? String == "Stage fanout joined group notify.fanout")
        #expect((object["metadata"] as? [String: Any])?.isEmpty == true)
        #expect(object["source"] as? String == "NotifyServiceTests")
        #expect(object["trace_id"] == nil && object["span_id"] == nil && object["error"] == nil)
        let timestamp = try #require(object["timestamp"] as? String)
        #expect(timestamp.wholeMatch(of: /\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z/) != nil, "\(timestamp)")
        let parsed = try #require(ISO8601DateFormatter.fractional.date(from: timestamp))
        #expect(abs(parsed.timeIntervalSinceNow) < 60)
        // The fields in a fixed order, for people reading the raw lines.
        let text = try #require(captured.texts.first)
        #expect(text.hasPrefix(#"{"timestamp":""#))
        #expect(text.contains(#"","level":"info","logger":"notify.pipeline","message":"#))
    }

    @Test("timestamps are RFC 3339 in UTC with microseconds")
    func timestamps() {
        #expect(LogTimestamp(seconds: 0, microseconds: 5).rfc3339 == "1970-01-01T00:00:00.000005Z")
        #expect(LogTimestamp(seconds: 1_700_000_000, microseconds: 123_456).rfc3339 == "2023-11-14T22:13:20.123456Z")
        #expect(LogTimestamp(seconds: 4_102_444_799, microseconds: 999_999).rfc3339 == "2099-12-31T23:59:59.999999Z")
    }

    @Test("level names are swift-log's, one per level")
    func levelNames() throws {
        let captured = CapturedLines()
        let log = logger(.json, into: captured)
        for level in Logger.Level.allCases { log.log(level: level, "at \(level)") }
        let levels = try captured.objects().map { $0["level"] as? String }
        #expect(levels == ["trace", "debug", "info", "notice", "warning", "error", "critical"])
    }

    @Test("control characters, quotes, backslashes and line separators are escaped; other non-ASCII is UTF-8")
    func escaping() async throws {
        let captured = CapturedLines()
        let nasty =
            "quote \" backslash \\ newline \n return \r tab \t nul \u{0} bell \u{7} unit \u{1F} del \u{7F} ls \u{2028} ps \u{2029} / Bob 山田 é 👋🏽 \u{1F468}\u{200D}\u{1F469}"
        logger(.json, into: captured, label: "notify \"label\"\n").info(
            "\(nasty)", metadata: ["key \"\n": "\(nasty)", "nested": [nasty: ["\(nasty)"]]])
        let line = try #require(captured.all.first)
        // One line: no raw control character but the final newline, and valid UTF-8.
        #expect(line.dropLast().allSatisfy { $0 >= 0x20 && $0 != 0x7F }, "raw control bytes in \(captured.texts)")
        #expect(String(validating: line, as: UTF8.self) != nil)
        let text = try #require(captured.texts.first)
        for escape in [
            #"\""#, #"\\"#, #"\n"#, #"\r"#, #"\t"#, #"\u0000"#, #"\u0007"#, #"\u001f"#, #"\u007f"#, #"\u2028"#,
            #"\u2029"#,
        ] {
            #expect(text.contains(escape), "\(escape) missing in \(text)")
        }
        #expect(text.contains("Bob 山田 é 👋🏽 \u{1F468}\u{200D}\u{1F469}"), "non-ASCII is written as UTF-8")
        // Every string comes back as it was logged.
        let object = try #require(try captured.objects().first)
        #expect(object["message"] as? String == nasty)
        #expect(object["logger"] as? String == "notify \"label\"\n")
        let metadata = try #require(object["metadata"] as? [String: Any])
        #expect(metadata["key \"\n"] as? String == nasty)
        #expect(((metadata["nested"] as? [String: Any])?[nasty] as? [String]) == [nasty])
        // And by a decoder other than Foundation's.
        #expect(try await pythonRoundTrip(line) == nasty)
    }

    @Test("metadata: the logger's, the provider's, then the call's; dictionaries and arrays nest as JSON")
    func metadataNesting() throws {
        let captured = CapturedLines()
        var log = logger(
            .json, into: captured, provider: Logger.MetadataProvider { ["from": "provider", "provided": "yes"] })
        log[metadataKey: "from"] = "logger"
        log[metadataKey: "kept"] = "logger"
        log.info(
            "nested",
            metadata: [
                "from": "call",
                "partitions": [.stringConvertible(0), .stringConvertible(1)],
                "consumer": [
                    "group": "notify.route", "topics": ["chat.devices", "notify.fanout"],
                    "lag": ["chat.devices[0]": "3"],
                ],
                "empty": [:], "none": [],
            ])
        let metadata = try #require(try captured.objects().first?["metadata"] as? [String: Any])
        #expect(metadata["from"] as? String == "call")
        #expect(metadata["kept"] as? String == "logger")
        #expect(metadata["provided"] as? String == "yes")
        #expect(metadata["partitions"] as? [String] == ["0", "1"], "leaves are strings")
        let consumer = try #require(metadata["consumer"] as? [String: Any])
        #expect(consumer["group"] as? String == "notify.route")
        #expect(consumer["topics"] as? [String] == ["chat.devices", "notify.fanout"])
        #expect(consumer["lag"] as? [String: String] == ["chat.devices[0]": "3"])
        #expect((metadata["empty"] as? [String: Any])?.isEmpty == true)
        #expect((metadata["none"] as? [Any])?.isEmpty == true)
        // Keys in order, so equal metadata gives equal lines.
        #expect(
            try #require(captured.texts.first).contains(
                #""consumer":{"group":"notify.route","lag":{"chat.devices[0]":"3"},"topics":["chat.devices","notify.fanout"]}"#
            ))
    }

    @Test("a provider's trace_id and span_id are top-level fields, out of metadata; its other keys stay")
    func traceIdentifiers() throws {
        let captured = CapturedLines()
        logger(.json, into: captured, provider: tracing).info("in a span", metadata: ["stage": "route"])
        let object = try #require(try captured.objects().first)
        #expect(object["trace_id"] as? String == "4bf92f3577b34da6a3ce929d0e0e4736")
        #expect(object["span_id"] as? String == "00f067aa0ba902b7")
        #expect(object["metadata"] as? [String: String] == ["trace_flags": "1", "stage": "route"])
        #expect(
            try #require(captured.texts.first).contains(
                #""message":"in a span","trace_id":"4bf92f3577b34da6a3ce929d0e0e4736","span_id":"00f067aa0ba902b7","metadata":"#
            ))

        // Outside a span the provider gives nothing, and the line has no ids.
        let quiet = CapturedLines()
        logger(.json, into: quiet, provider: Logger.MetadataProvider { [:] }).info("no span")
        let plain = try #require(try quiet.objects().first)
        #expect(plain["trace_id"] == nil && plain["span_id"] == nil)

        // The ids of a logger's own metadata or of the call are lifted the same way; a value that is
        // not a string stays in metadata.
        let own = CapturedLines()
        var log = logger(.json, into: own)
        log[metadataKey: "trace_id"] = "0af7651916cd43dd8448eb211c80319c"
        log.info("own", metadata: ["span_id": ["not", "an id"]])
        let lifted = try #require(try own.objects().first)
        #expect(lifted["trace_id"] as? String == "0af7651916cd43dd8448eb211c80319c")
        #expect(lifted["span_id"] == nil)
        #expect((lifted["metadata"] as? [String: Any])?["span_id"] as? [String] == ["not", "an id"])
    }

    @Test("the commands' provider (swift-otel's) gives the current span's ids, and nothing outside a span")
    func spanIdentifiersFromSwiftOTel() throws {
        var configuration = OTel.Configuration.default
        configuration.traces.exporter = .none
        configuration.logs.enabled = false
        configuration.metrics.enabled = false
        let tracer = try OTel.makeTracingBackend(configuration: configuration).factory
        let captured = CapturedLines()
        let log = logger(.json, into: captured, provider: TraceExport.loggingMetadataProvider)
        log.info("before")
        let span = tracer.startSpan("delivery attempt")
        ServiceContext.withValue(span.context) { log.info("inside") }
        span.end()
        let objects = try captured.objects()
        #expect(objects.count == 2)
        #expect(objects.first?["trace_id"] == nil)
        let inside = try #require(objects.last)
        #expect((inside["trace_id"] as? String)?.wholeMatch(of: /[0-9a-f]{32}/) != nil, "\(inside)")
        #expect((inside["span_id"] as? String)?.wholeMatch(of: /[0-9a-f]{16}/) != nil, "\(inside)")
    }

    @Test("the provider that LoggingSystem would pass reaches both handlers")
    func providerReachesTheTextHandler() throws {
        let captured = CapturedLines()
        logger(.text, into: captured, label: "notify.sink.apns", provider: tracing).warning(
            "retrying", metadata: ["attempt": "2"])
        let text = try #require(captured.texts.first)
        #expect(text.hasSuffix("\n") && text.dropLast().contains("\n") == false)
        #expect(
            text.contains(
                " warning notify.sink.apns: attempt=2 span_id=00f067aa0ba902b7 trace_flags=1 trace_id=4bf92f3577b34da6a3ce929d0e0e4736 [NotifyServiceTests] retrying"
            ), "\(text)")
    }

    @Test("an error passed with the call is a top-level object")
    func error() throws {
        struct BrokerGone: Error, CustomStringConvertible {
            var description: String { "all brokers \"down\"" }
        }
        let captured = CapturedLines()
        logger(.json, into: captured).error("send failed", error: BrokerGone())
        let error = try #require(try captured.objects().first?["error"] as? [String: String])
        #expect(error["message"] == "all brokers \"down\"")
        #expect(error["type"]?.hasSuffix("BrokerGone") == true)
    }

    @Test("lines of concurrent loggers never interleave")
    func concurrentLines() async throws {
        let captured = CapturedLines()
        let log = logger(.json, into: captured)
        await withTaskGroup(of: Void.self) { group in
            for task in 0..<8 {
                group.addTask {
                    for index in 0..<200 {
                        log.info(
                            "task \(task) line \(index)",
                            metadata: ["payload": "\(String(repeating: "x", count: 5000))"])
                    }
                }
            }
        }
        #expect(try captured.objects().count == 1600)
    }

    /// The message of `line` as Python's json module reads it.
    private func pythonRoundTrip(_ line: [UInt8]) async throws -> String? {
        let python = try await runChildProcess(
            "python3",
            [
                "-c",
                "import json,sys; sys.stdout.buffer.write(json.loads(sys.stdin.buffer.read())['message'].encode('utf-8', 'surrogatepass'))",
            ], input: Data(line))
        guard python.status == 0 else { return nil }
        return String(validating: [UInt8](python.output), as: UTF8.self)
    }
}

@Suite("log.format: a setting like the others")
struct LogFormatSettingTests {
    @Test("text by default; json from --set, the environment or the file, the flag winning")
    func layers() async throws {
        #expect(NotifySettings.defaults.logFormat == .text)
        #expect(try await NotifySettings.load(from: SettingsSources(environment: [:])).logFormat == .text)
        #expect(
            try await NotifySettings.load(from: SettingsSources(environment: ["NOTIFY_LOG_FORMAT": "json"])).logFormat
                == .json)
        #expect(
            try await NotifySettings.load(
                from: SettingsSources(
                    environment: ["NOTIFY_LOG_FORMAT": "json"], flags: ["log.format": "text"],
                    flagNames: ["log.format": "--log-format"])
            ).logFormat == .text)
        let (path, directory) = try SettingsTests.writeConfig(#"{"log": {"format": "json", "level": "debug"}}"#)
        defer { try? FileManager.default.removeItem(at: directory) }
        let fromFile = try await NotifySettings.load(from: SettingsSources(configFile: path, environment: [:]))
        #expect(fromFile.logFormat == .json && fromFile.logLevel == "debug")
    }

    @Test("a bad value is refused, naming its source and the allowed values")
    func badValue() async throws {
        await #expect {
            try await NotifySettings.load(
                from: SettingsSources(
                    environment: [:], flags: ["log.format": "xml"], flagNames: ["log.format": "--log-format"]))
        } throws: { error in
            "\(error)".contains(#"flag --log-format: log.format: invalid value: "xml" is not one of text, json"#)
        }
        #expect(
            SettingsFileCheck.problems(in: Data(#"{"log": {"format": "JSON"}}"#.utf8), source: "n.json").map(
                \.description)
                == [#"n.json: log.format: invalid value: "JSON" is not one of text, json; did you mean "json"?"#])
    }

    @Test("commands without settings read --log-format, then NOTIFY_LOG_FORMAT, checked the same way")
    func withoutSettings() throws {
        #expect(try LogFormat.resolve(flag: nil, environment: [:]) == .text)
        #expect(try LogFormat.resolve(flag: nil, environment: ["NOTIFY_LOG_FORMAT": "json"]) == .json)
        #expect(try LogFormat.resolve(flag: "text", environment: ["NOTIFY_LOG_FORMAT": "json"]) == .text)
        #expect(throws: SettingsError.self) { try LogFormat.resolve(flag: "xml", environment: [:]) }
        do {
            _ = try LogFormat.resolve(flag: nil, environment: ["NOTIFY_LOG_FORMAT": "xml"])
            Issue.record("xml accepted")
        } catch {
            #expect(
                "\(error)".contains(
                    #"environment variable NOTIFY_LOG_FORMAT: log.format: invalid value: "xml" is not one of text, json"#
                ))
        }
    }
}

extension ISO8601DateFormatter {
    /// RFC 3339 with fractional seconds.
    fileprivate static var fractional: ISO8601DateFormatter {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        return formatter
    }
}
