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
}
