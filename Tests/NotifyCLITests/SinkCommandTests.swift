import Foundation
import Logging
import NotifyKafka
import NotifyService
import NotifySinks
import Testing

@testable import NotifyCLI

@Suite struct SinkCommandTests {
    /// The runtime configuration `notify sink` would run with, given its arguments and environment.
    private func runtimeConfiguration(_ arguments: [String], environment: [String: String] = [:]) async throws
        -> SinkRuntimeConfiguration
    {
        let command = try SinkCommand.parse(arguments)
        let settings = try await command.loadSettings(environment: environment)
        return command.runtimeConfiguration(settings: settings, metrics: NotifyMetrics(), observer: SinkObserver())
    }

    @Test("sink.retryBaseDelay and sink.retryMaxDelay set the sink's retry policy")
    func retryDelaySettingsReachThePolicy() async throws {
        let configuration = try await runtimeConfiguration(
            [
                "--kind", "jsonl", "--set", "sink.retryBaseDelay=0.25", "--set", "sink.retryMaxDelay=2",
                "--max-attempts", "3",
            ])
        #expect(configuration.retry.initialDelay == .milliseconds(250))
        #expect(configuration.retry.maxDelay == .seconds(2))
        #expect(configuration.retry.maxAttempts == 3)
    }

    @Test("without them, the retry policy has the settings' documented defaults, 0.2 s and 30 s")
    func retryDelayDefaultsAreTheSettings() async throws {
        let configuration = try await runtimeConfiguration(["--kind", "jsonl"])
        #expect(configuration.retry.initialDelay == .milliseconds(200))
        #expect(configuration.retry.maxDelay == .seconds(30))
        #expect(configuration.retry.maxAttempts == 8)
        #expect(configuration.maxInFlight == 512)
    }

    @Test("sink.maxAttempts and sink.concurrency come from the environment, and their flags win over it")
    func attemptsAndConcurrencyFollowTheSettings() async throws {
        let environment = ["NOTIFY_SINK_MAX_ATTEMPTS": "3", "NOTIFY_SINK_CONCURRENCY": "40"]
        let fromEnvironment = try await runtimeConfiguration(["--kind", "jsonl"], environment: environment)
        #expect(fromEnvironment.retry.maxAttempts == 3)
        #expect(fromEnvironment.maxInFlight == 40)
        let fromFlags = try await runtimeConfiguration(
            ["--kind", "jsonl", "--max-attempts", "5", "--max-in-flight", "7"], environment: environment)
        #expect(fromFlags.retry.maxAttempts == 5)
        #expect(fromFlags.maxInFlight == 7)
        await #expect(throws: (any Error).self) {
            _ = try await runtimeConfiguration(["--kind", "jsonl", "--max-attempts", "0"])
        }
    }

    @Test("the sinks of notify dev take their retries and concurrency from the same settings")
    func devSinksFollowTheSinkSettings() async throws {
        let command = try SinkCommand.parse(["--kind", "jsonl"])
        let settings = try await command.loadSettings(environment: [
            "NOTIFY_SINK_RETRY_BASE_DELAY": "0.05", "NOTIFY_SINK_RETRY_MAX_DELAY": "1", "NOTIFY_SINK_MAX_ATTEMPTS": "2",
            "NOTIFY_SINK_CONCURRENCY": "16",
        ])
        let client = KafkaClientConfiguration(bootstrapServers: "127.0.0.1:9092", clientId: "notify-dev")
        let configuration = SinkRuntimeConfiguration(
            settings: settings, client: client, groupId: "notify-dev-console", observer: SinkObserver())
        #expect(
            configuration.retry == RetryPolicy(maxAttempts: 2, initialDelay: .milliseconds(50), maxDelay: .seconds(1)))
        #expect(configuration.maxInFlight == 16)
        #expect(configuration.groupId == "notify-dev-console")
    }

    /// The settings `notify sink` loads from `arguments` and `environment`.
    private func settings(_ arguments: [String], environment: [String: String] = [:]) async throws -> NotifySettings {
        try await SinkCommand.parse(arguments).loadSettings(environment: environment)
    }

    @Test(
        "--listen and --ack-timeout-ms are sink.inapp.listen and sink.inapp.ackTimeout: the environment sets them, a flag wins"
    )
    func inAppFlagsAreTheirSettings() async throws {
        let environment = ["NOTIFY_SINK_INAPP_LISTEN": "127.0.0.1:9101", "NOTIFY_SINK_INAPP_ACK_TIMEOUT": "1.5"]
        let fromEnvironment = try await settings(["--kind", "inapp"], environment: environment).sink.inapp
        #expect(fromEnvironment.listen.port == 9101)
        #expect(fromEnvironment.ackTimeout == .milliseconds(1_500))
        let fromFlags = try await settings(
            ["--kind", "inapp", "--listen", "127.0.0.1:9102", "--ack-timeout-ms", "250"], environment: environment
        ).sink.inapp
        #expect(fromFlags.listen.port == 9102)
        #expect(fromFlags.ackTimeout == .milliseconds(250))
        let defaults = try await settings(["--kind", "inapp"]).sink.inapp
        #expect(defaults.listen.description == "127.0.0.1:8090")
        #expect(defaults.ackTimeout == .seconds(5))
        // 50 ms is below the setting's 0.1 s.
        await #expect(throws: (any Error).self) {
            _ = try await settings(["--kind", "inapp", "--ack-timeout-ms", "50"])
        }
    }

    @Test("the apns, fcm, webhook and jsonl flags are the settings they name")
    func kindFlagsAreTheirSettings() async throws {
        let file = #filePath
        let apns = try await settings(
            [
                "--kind", "apns", "--key-id", "FLAGKEY", "--connections", "4", "--endpoint",
                "https://api.sandbox.push.apple.com", "--ca-file", file,
            ], environment: ["NOTIFY_SINK_APNS_KEY_ID": "ENVKEY", "NOTIFY_SINK_APNS_TEAM_ID": "TEAM"]
        ).sink
        #expect(apns.apns.keyId == "FLAGKEY")
        #expect(apns.apns.teamId == "TEAM")
        #expect(apns.apns.connections == 4)
        #expect(apns.apns.endpoint == "https://api.sandbox.push.apple.com")
        #expect(apns.caFile == file)
        let fcm = try await settings(["--kind", "fcm", "--set", "sink.fcm.endpoint=https://fcm.example.com"]).sink.fcm
        #expect(fcm.endpoint == "https://fcm.example.com")
        let webhook = try await settings(
            ["--kind", "webhook", "--secret-file", file],
            environment: ["NOTIFY_SINK_WEBHOOK_URL": "https://hooks.example.com/notify"]
        ).sink.webhook
        #expect(webhook.url == "https://hooks.example.com/notify")
        #expect(webhook.secretFile == file)
        let jsonl = try await settings(["--kind", "jsonl"], environment: ["NOTIFY_SINK_JSONL_OUT": "/tmp/out.jsonl"])
        #expect(jsonl.sink.jsonlOut == "/tmp/out.jsonl")
    }

    @Test("a kind makes its sink from the settings: a jsonl sink writes to sink.jsonl.out set in the environment")
    func kindsMakeTheirSinkFromTheSettings() async throws {
        let out = FileManager.default.temporaryDirectory.appendingPathComponent("sink-\(UUID().uuidString).jsonl").path
        defer { try? FileManager.default.removeItem(atPath: out) }
        let command = try SinkCommand.parse(["--kind", "jsonl"])
        let loaded = try await command.loadSettings(environment: ["NOTIFY_SINK_JSONL_OUT": out])
        let context = SinkKindContext(
            kind: .jsonl, settings: loaded, logger: Logger(label: "sink-command-test"), metrics: NotifyMetrics())
        _ = try command.kinds.jsonl.makeSink(command.shared, context)
        #expect(FileManager.default.fileExists(atPath: out))
        let unset = SinkKindContext(
            kind: .jsonl, settings: try await command.loadSettings(environment: [:]),
            logger: Logger(label: "sink-command-test"), metrics: NotifyMetrics())
        #expect {
            _ = try command.kinds.jsonl.makeSink(command.shared, unset)
        } throws: { error in
            String(describing: error).contains("--kind jsonl needs --out (setting sink.jsonl.out)")
        }
    }

    @Test("a flag the kind does not read is refused, naming the kinds that read it")
    func flagsOfOtherKindsAreRefused() throws {
        func refusal(_ arguments: [String]) -> String? {
            do {
                try SinkCommand.parse(arguments).refuseFlagsOfOtherKinds()
                return nil
            } catch {
                return String(describing: error)
            }
        }
        #expect(
            refusal(["--kind", "jsonl", "--out", "a.jsonl", "--url", "https://x.example"])
                == "--url is for --kind webhook.")
        #expect(
            refusal(["--kind", "inapp", "--endpoint", "https://x.example"]) == "--endpoint is for --kind apns or fcm.")
        #expect(refusal(["--kind", "fcm", "--secret-file", "s"]) == "--secret-file is for --kind inapp or webhook.")
        #expect(refusal(["--kind", "webhook", "--listen", "127.0.0.1:1"]) == "--listen is for --kind inapp.")
        #expect(refusal(["--kind", "apns", "--secrets-dir", "d"]) == "--secrets-dir is for --kind inapp or webhook.")
        // The deployment files' commands.
        #expect(
            refusal([
                "--kind", "apns", "--endpoint", "https://e.example", "--key-file", "k", "--key-id", "K", "--team-id",
                "T",
            ]) == nil)
        #expect(refusal(["--kind", "inapp", "--listen", "0.0.0.0:8090", "--secret-file", "s"]) == nil)
        #expect(
            refusal(["--kind", "webhook", "--url", "https://x.example", "--secret-file", "s", "--ca-file", "c"]) == nil)
        #expect(refusal(["--kind", "fcm", "--service-account", "a.json"]) == nil)
        #expect(refusal(["--kind", "jsonl", "--out", "a.jsonl", "--path", "push"]) == nil)
    }
}
