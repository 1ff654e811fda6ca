import NotifyService
import NotifySinks
import Testing

@testable import NotifyCLI

@Suite struct SinkCommandTests {
    /// The runtime configuration `notify sink` would run with, given its arguments and no environment.
    private func runtimeConfiguration(_ arguments: [String]) async throws -> SinkRuntimeConfiguration {
        let command = try SinkCommand.parse(arguments)
        let settings = try await command.service.loadSettings(kafka: command.kafka, environment: [:])
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
    }
}
