import Foundation
import NotifyTestSupport
import Testing

@testable import NotifyCLI

/// Runs the built `notify` executable (it sits beside the test bundle) and collects its output.
private func runNotify(_ arguments: [String]) async throws -> (status: Int32, output: String, errors: String) {
    let products = Bundle.main.bundleURL.deletingLastPathComponent()
    let candidates = [
        products.appendingPathComponent("notify"),
        URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent("notify"),
    ]
    let executable = try #require(
        candidates.first { FileManager.default.isExecutableFile(atPath: $0.path) }, "notify not built")
    let result = try await runChildProcess(executable.path, arguments)
    return (result.status, result.outputText, result.errorText)
}

@Suite("notify config, and the settings flags of long-running commands")
struct ConfigCommandTests {
    private static func temporaryFile(_ text: String, name: String) throws -> URL {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("notify-cli-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let file = directory.appendingPathComponent(name)
        try Data(text.utf8).write(to: file)
        return file
    }

    @Test("notify config check explains every problem of a file with its path and exits 1")
    func checkBadFile() async throws {
        let file = try Self.temporaryFile(
            #"{"kafka": {"bootstrap": 9092, "grupId": "g"}, "sink": {"maxAttempts": 0}}"#, name: "notify.json")
        defer { try? FileManager.default.removeItem(at: file.deletingLastPathComponent()) }
        let result = try await runNotify(["config", "check", file.path])
        #expect(result.status == 1)
        #expect(
            result.errors.split(separator: "\n") == [
                "notify.json: kafka.bootstrap: expected `HOST:PORT,...`, found integer 9092",
                "notify.json: kafka.grupId: unknown setting; did you mean \"kafka.groupId\"?",
                "notify.json: sink.maxAttempts: out of range: 0 is outside 1…100",
                "\(file.path): 3 problems",
            ])
    }

    @Test("notify config check accepts a good file and exits 0")
    func checkGoodFile() async throws {
        let file = try Self.temporaryFile(
            #"{"kafka": {"bootstrap": "k1:9092,k2:9092"}, "http": {"listen": "0.0.0.0:8080"}}"#, name: "good.json")
        defer { try? FileManager.default.removeItem(at: file.deletingLastPathComponent()) }
        let result = try await runNotify(["config", "check", file.path])
        #expect(result.status == 0)
        #expect(result.output == "\(file.path): OK\n")
    }

    @Test("notify config check refuses a trailing comma and places JSON errors by line and column")
    func checkSyntax() async throws {
        let trailing = try Self.temporaryFile(#"{"kafka": {"bootstrap": "a:1"},}"#, name: "trailing.json")
        defer { try? FileManager.default.removeItem(at: trailing.deletingLastPathComponent()) }
        let result = try await runNotify(["config", "check", trailing.path])
        #expect(result.status == 1)
        #expect(
            result.errors.hasPrefix(
                "trailing.json: not valid JSON: line 1, column 32: a comma must be followed by another member (trailing commas are not JSON)\n"
            ),
            "\(result.errors)")

        let unclosed = try Self.temporaryFile(
            "{\n  \"kafka\": {\n    \"bootstrap\": \"a:1\n  }\n}\n", name: "unclosed.json")
        defer { try? FileManager.default.removeItem(at: unclosed.deletingLastPathComponent()) }
        let second = try await runNotify(["config", "check", unclosed.path])
        #expect(second.status == 1)
        #expect(
            second.errors.contains(
                "unclosed.json: not valid JSON: line 3, column 22: a control character (such as a line break) inside a string"
            ),
            "\(second.errors)")
    }

    @Test("notify config check and -X refuse property names librdkafka does not know, with the nearest one")
    func librdkafkaPropertyNames() async throws {
        let file = try Self.temporaryFile(
            #"{"kafka": {"properties": {"bootstrap.server": "x:1", "linger.ms": "5", "acks": "most"}}}"#,
            name: "props.json")
        defer { try? FileManager.default.removeItem(at: file.deletingLastPathComponent()) }
        let result = try await runNotify(["config", "check", file.path])
        #expect(result.status == 1)
        let lines = result.errors.split(separator: "\n").map(String.init)
        #expect(lines.count == 3, "\(lines)")
        #expect(
            lines.first { $0.hasPrefix("props.json: kafka.properties.bootstrap.server: invalid value: ") }?
                .hasSuffix(#"; did you mean "bootstrap.servers"?"#) == true, "\(lines)")
        #expect(lines.contains { $0.hasPrefix("props.json: kafka.properties.acks: invalid value: ") }, "\(lines)")
        #expect(!lines.contains { $0.contains("linger.ms") })

        let refused = #expect(throws: (any Error).self) {
            try KafkaOptions.parse(["-X", "lingr.ms=5"]).librdkafkaProperties()
        }
        #expect(refused.map { "\($0)" }?.contains(#"-X lingr.ms=5: "#) == true)
        #expect(
            refused.map { "\($0)" }?.contains(#"did you mean "linger.ms"?"#) == true, "\(String(describing: refused))")
        #expect(try KafkaOptions.parse(["-X", "linger.ms=5"]).librdkafkaProperties() == ["linger.ms": "5"])
    }

    @Test("notify config reference prints docs/configuration.md")
    func reference() async throws {
        let result = try await runNotify(["config", "reference"])
        #expect(result.status == 0)
        #expect(result.output.hasPrefix("# Configuration reference"))
        #expect(result.output.contains("`NOTIFY_PIPELINE_IDENTITY_WAIT`"))
    }

    @Test("--set, --http-listen, --bootstrap and -X form the flag layer over environment and file")
    func serviceOptions() async throws {
        let file = try Self.temporaryFile(
            #"{"http": {"listen": "0.0.0.0:9000"}, "pipeline": {"identityWait": 4}}"#, name: "c.json")
        defer { try? FileManager.default.removeItem(at: file.deletingLastPathComponent()) }
        let kafka = try KafkaOptions.parse(["--bootstrap", "flag:9092", "-X", "acks=all"])
        let service = try ServiceOptions.parse(["--set", "pipeline.identityWait=1.5", "--http-listen", "127.0.0.1:0"])
        let settings = try await service.loadSettings(
            kafka: kafka, commandFlags: [(key: "sink.apns.keyId", flag: "--key-id", value: "KID")],
            environment: [
                "NOTIFY_CONFIG": file.path, "NOTIFY_PIPELINE_IDENTITY_WAIT": "3",
                "NOTIFY_KAFKA_PROPERTIES": "acks=1,linger.ms=5",
            ])
        #expect(settings.kafka.bootstrap == "flag:9092")
        #expect(settings.kafka.properties == ["acks": "all", "linger.ms": "5"])
        #expect(settings.pipeline.identityWait == .milliseconds(1500))
        #expect(settings.http.listen.port == 0)
        #expect(settings.sink.apns.keyId == "KID")

        let badFlag = try ServiceOptions.parse(["--http-listen", "nowhere"])
        await #expect(throws: (any Error).self) { try await badFlag.loadSettings(kafka: kafka, environment: [:]) }
    }

    @Test("pipeline.saveInterval reaches the pipeline: 5 s by default, any value set")
    func saveInterval() async throws {
        let kafka = try KafkaOptions.parse([])
        let schemas = ["--set", "pipeline.schemas=\(repositoryRoot.appendingPathComponent("Schemas").path)"]
        let defaults = try await ServiceOptions.parse(schemas).loadSettings(kafka: kafka, environment: [:])
        let core = try defaults.coreConfiguration()
        #expect(try defaults.pipelineSettings(core: core).saveInterval == .seconds(5))
        let set = try await ServiceOptions.parse(schemas + ["--set", "pipeline.saveInterval=0.5"]).loadSettings(
            kafka: kafka, environment: [:])
        #expect(try set.pipelineSettings(core: core).saveInterval == .milliseconds(500))
        let refused = await #expect(throws: (any Error).self) {
            try await ServiceOptions.parse(schemas + ["--set", "pipeline.saveInterval=0"]).loadSettings(
                kafka: kafka, environment: [:])
        }
        #expect(refused.map { "\($0)" }?.contains("pipeline.saveInterval") == true, "\(String(describing: refused))")
    }
}
