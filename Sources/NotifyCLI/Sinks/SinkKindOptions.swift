import ArgumentParser
import Logging
import NotifyService
import NotifySinks

/// One sink kind's own flags and how it makes its sink: what `notify sink --kind` needs to run a kind.
/// A new kind is a type conforming to this (copy `JSONLSinkOptions.swift`), registered in `SinkKind.swift`.
protocol SinkKindOptions: ParsableArguments {
    /// The sink this kind delivers with.
    associatedtype Sink: NotificationSink

    /// Whether the kind reads `--secrets-dir` (setting `sink.KIND.secretsDirectory`); others refuse it.
    var readsSecretsDirectory: Bool { get }

    /// The kind's own flags as the settings they stand for (key, flag, value if given): they go over
    /// `--set`, `--config`, the environment and the defaults, and ``makeSink(_:_:)`` reads the settings.
    var settingFlags: [(key: String, flag: String, value: String?)] { get }

    /// The kind's sink, from its own flags, the flags several kinds share and the settings;
    /// a missing or malformed flag throws a `ValidationError` naming it.
    func makeSink(_ shared: SharedSinkOptions, _ context: SinkKindContext) throws -> Sink

    /// Runs `runtime` (the sink's runtime, its probes and metrics) inside whatever the kind serves
    /// beside it, such as the in-app gateway's listener; returns when `runtime` does.
    func serve(_ sink: Sink, _ context: SinkKindContext, around runtime: () async throws -> Void) async throws
}

extension SinkKindOptions {
    var readsSecretsDirectory: Bool { false }

    var settingFlags: [(key: String, flag: String, value: String?)] { [] }

    /// Most kinds serve nothing beside their runtime: this runs it.
    func serve(_ sink: Sink, _ context: SinkKindContext, around runtime: () async throws -> Void) async throws {
        try await runtime()
    }
}

/// What a kind's sink is made with besides flags: the loaded settings, the logger and the metrics.
struct SinkKindContext {
    /// The kind being run (for messages).
    var kind: SinkKind
    var settings: NotifySettings
    var logger: Logger
    var metrics: NotifyMetrics

    /// How the HTTP kinds (apns, fcm, webhook) reach their service: `sink.caFile`, `sink.requestTimeout`
    /// and `sink.apns.connections`.
    var transport: HTTPTransportConfiguration {
        HTTPTransportConfiguration(
            caFile: settings.sink.caFile, requestTimeout: settings.sink.requestTimeout,
            connections: settings.sink.apns.connections)
    }

    /// `value`, or an error saying that this kind needs `option` (the flag of setting `key`).
    func required(_ value: String?, _ option: String, setting key: String) throws -> String {
        guard let value, !value.isEmpty else {
            throw ValidationError("--kind \(kind.rawValue) needs \(option) (setting \(key)).")
        }
        return value
    }
}
