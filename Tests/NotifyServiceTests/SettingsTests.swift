import Foundation
import Testing

@testable import NotifyService

@Suite("Settings: layers, checks and the reference")
struct SettingsTests {
    /// A config file in a fresh temporary directory, removed by the caller's `defer`.
    static func writeConfig(_ text: String, name: String = "notify.json") throws -> (path: String, directory: URL) {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "notify-settings-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let file = directory.appendingPathComponent(name)
        try Data(text.utf8).write(to: file)
        return (file.path, directory)
    }

    @Test("defaults apply when nothing is set")
    func defaults() async throws {
        let settings = try await NotifySettings.load(from: SettingsSources(environment: [:]))
        #expect(settings == NotifySettings.defaults)
        #expect(settings.kafka.bootstrap == "127.0.0.1:9092")
        #expect(settings.pipeline.identityWait == .seconds(2))
        #expect(settings.http.listen == HostAndPort(host: "127.0.0.1", port: 8080))
        #expect(settings.shutdownGracePeriod == .seconds(10))
        #expect(settings.kafka.groupId == nil)
    }

    @Test("flags beat the environment, which beats the file, which beats the defaults")
    func precedence() async throws {
        let config = try Self.writeConfig(
            """
            {"kafka": {"bootstrap": "file:9092", "clientId": "from-file", "maxBatchSize": 10,
                       "properties": {"security.protocol": "SSL", "linger.ms": 5}},
             "pipeline": {"identityWait": 1.5, "clientStateMaxAge": 60},
             "http": {"listen": "0.0.0.0:9000"}}
            """)
        defer { try? FileManager.default.removeItem(at: config.directory) }
        let sources = SettingsSources(
            configFile: config.path,
            environment: [
                "NOTIFY_KAFKA_BOOTSTRAP": "env:9092", "NOTIFY_KAFKA_CLIENT_ID": "from-env",
                "NOTIFY_PIPELINE_IDENTITY_WAIT": "3", "NOTIFY_KAFKA_PROPERTIES": "linger.ms=7,acks=all",
            ],
            flags: ["kafka.bootstrap": "flag:9092"], flagNames: ["kafka.bootstrap": "--bootstrap"],
            kafkaProperties: ["acks": "1"])
        let settings = try await NotifySettings.load(from: sources)
        #expect(settings.kafka.bootstrap == "flag:9092")
        #expect(settings.kafka.clientId == "from-env")
        #expect(settings.kafka.maxBatchSize == 10)
        #expect(settings.pipeline.identityWait == .seconds(3))
        #expect(settings.pipeline.clientStateMaxAge == .seconds(60))
        #expect(settings.http.listen == HostAndPort(host: "0.0.0.0", port: 9000))
        #expect(settings.kafka.properties == ["security.protocol": "SSL", "linger.ms": "7", "acks": "1"])
    }

    @Test("NOTIFY_BOOTSTRAP is read when NOTIFY_KAFKA_BOOTSTRAP is absent")
    func bootstrapAlias() async throws {
        let settings = try await NotifySettings.load(
            from: SettingsSources(environment: ["NOTIFY_BOOTSTRAP": "alias:1"]))
        #expect(settings.kafka.bootstrap == "alias:1")
    }

    @Test("a file's unknown key, wrong type and value out of range are each explained with their path")
    func fileProblems() throws {
        let config = try Self.writeConfig(
            """
            {"kafka": {"bootstap": "x:1", "maxBatchSize": "many"},
             "pipeline": {"identityWait": 600, "stages": ["fanout", "rout"]},
             "htp": {"listen": "0.0.0.0:80"},
             "http": {"listen": "nowhere"},
             "log": {"level": "verbose"}}
            """, name: "bad.json")
        defer { try? FileManager.default.removeItem(at: config.directory) }
        let problems = SettingsFileCheck.problems(inFileAt: config.path)
        let messages = problems.map(\.description)
        #expect(
            messages == [
                "bad.json: htp: unknown setting; did you mean \"http\"?",
                "bad.json: http.listen: invalid value: \"nowhere\" is not HOST:PORT (no port)",
                "bad.json: kafka.bootstap: unknown setting; did you mean \"kafka.bootstrap\"?",
                "bad.json: kafka.maxBatchSize: expected integer, 1…100000, found text \"many\"",
                "bad.json: log.level: invalid value: \"verbose\" is not one of trace, debug, info, notice, warning, error, critical",
                "bad.json: pipeline.identityWait: out of range: 600 s is outside 0…60 s",
                "bad.json: pipeline.stages: invalid value: \"rout\" is not one of fanout, route; did you mean \"route\"?",
            ])
    }

    @Test("a file that is not JSON is refused with the parser's reason")
    func notJSON() throws {
        let config = try Self.writeConfig("{\"kafka\": {\"bootstrap\": }", name: "broken.json")
        defer { try? FileManager.default.removeItem(at: config.directory) }
        let problems = SettingsFileCheck.problems(inFileAt: config.path)
        #expect(problems.count == 1)
        #expect(problems.first?.description.hasPrefix("broken.json: not valid JSON") == true)
        #expect(
            SettingsFileCheck.problems(inFileAt: config.directory.appendingPathComponent("missing.json").path)
                .map(\.description).first?.contains("cannot read") == true)
    }

    @Test("loading refuses bad environment variables and flags, naming each source")
    func loadProblems() async throws {
        let sources = SettingsSources(
            environment: ["NOTIFY_KAFKA_MAX_BATCH_SIZE": "lots", "NOTIFY_SHUTDOWN_GRACE_PERIOD": "0"],
            flags: ["http.listen": "localhost", "pipeline.identityWiat": "1"],
            flagNames: ["http.listen": "--http-listen"])
        let error = await #expect(throws: SettingsError.self) { try await NotifySettings.load(from: sources) }
        let messages = Set(error?.problems.map(\.description) ?? [])
        #expect(
            messages == [
                "environment variable NOTIFY_KAFKA_MAX_BATCH_SIZE: kafka.maxBatchSize: expected integer, 1…100000, found \"lots\"",
                "environment variable NOTIFY_SHUTDOWN_GRACE_PERIOD: shutdown.gracePeriod: out of range: 0 s is outside 1…120 s",
                "flag --http-listen: http.listen: invalid value: \"localhost\" is not HOST:PORT (no port)",
                "flag --set pipeline.identityWiat: pipeline.identityWiat: unknown setting; did you mean \"pipeline.identityWait\"?",
            ])
    }

    @Test("every setting's documented environment variable is the one that is read")
    func environmentNamesAreRead() async throws {
        for definition in SettingsCatalogue.all where definition.kind == .text {
            let name = definition.environmentVariable
            #expect(name.hasPrefix("NOTIFY_"))
            let provider = SettingsLoader.environmentProvider([name: "probe-value"])
            let found = try provider.value(forKey: definition.configKey, type: .string).value?.content
            #expect(found == .string("probe-value"), "\(definition.key) via \(name)")
        }
    }

    @Test("the reference's example file is valid and every key is documented once")
    func exampleAndCatalogue() throws {
        #expect(SettingsFileCheck.problems(in: Data(ConfigurationReference.exampleFile.utf8), source: "example") == [])
        let keys = SettingsCatalogue.all.map(\.key)
        #expect(Set(keys).count == keys.count)
        for definition in SettingsCatalogue.all {
            #expect(!definition.summary.isEmpty, "\(definition.key) has no summary")
            if let value = definition.defaultValue {
                let content: Result<SettingValue, SettingsProblem.Kind> =
                    switch value {
                    case .text(let text): definition.check(.string(text))
                    case .integer(let number): definition.check(.int(number))
                    case .seconds(let number): definition.check(.double(number))
                    case .boolean(let flag): definition.check(.bool(flag))
                    case .list(let words): definition.check(.stringArray(words))
                    case .properties: .success(value)
                    }
                #expect((try? content.get()) == value, "\(definition.key)'s default fails its own check")
            }
        }
    }

    @Test("docs/configuration.md is the generated reference")
    func referenceIsCurrent() throws {
        let path = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("docs/configuration.md")
        let onDisk = try String(contentsOf: path, encoding: .utf8)
        #expect(
            onDisk == ConfigurationReference.markdown(),
            "regenerate with: notify config reference > docs/configuration.md")
    }
}
