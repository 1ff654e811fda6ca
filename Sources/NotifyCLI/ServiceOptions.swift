import ArgumentParser
import Foundation
import NotifyKafka
import NotifyService

/// The options every command whose work depends on the settings takes: the config file and `--set`
/// for any setting. `pipeline`, `render` and `replay` read the same settings this way, so the folds
/// they run use the same waits and intervals (docs/configuration.md).
struct SettingsOptions: ParsableArguments {
    @Option(
        name: .long,
        help: ArgumentHelp("JSON config file (env NOTIFY_CONFIG). See docs/configuration.md.", valueName: "file"))
    var config: String?

    @Option(
        name: .customLong("set"),
        help: ArgumentHelp(
            "Any setting, KEY=VALUE (repeatable), e.g. --set pipeline.identityWait=1.5.", valueName: "key=value"))
    var settings: [String] = []

    /// Loads the settings: `dedicated` flags (by setting key, with the flag's name for messages) and
    /// `--set` over the environment, the config file and the defaults.
    func load(
        dedicated: [(key: String, flag: String, value: String?)], kafkaProperties: [String: String] = [:],
        environment: [String: String] = ProcessInfo.processInfo.environment
    ) async throws -> NotifySettings {
        var flags: [String: String] = [:]
        var flagNames: [String: String] = [:]
        for setting in settings {
            guard let equals = setting.firstIndex(of: "="), equals != setting.startIndex else {
                throw ValidationError("--set \(setting): expected KEY=VALUE.")
            }
            flags[String(setting[..<equals])] = String(setting[setting.index(after: equals)...])
        }
        for (key, flag, value) in dedicated {
            guard let value else { continue }
            flags[key] = value
            flagNames[key] = flag
        }
        let sources = SettingsSources(
            configFile: config ?? environment["NOTIFY_CONFIG"].flatMap { $0.isEmpty ? nil : $0 },
            environment: environment, flags: flags, flagNames: flagNames, kafkaProperties: kafkaProperties)
        return try await NotifySettings.load(from: sources)
    }
}

/// The options every long-running command takes besides ``KafkaOptions``: the settings
/// (``SettingsOptions``), `--http-listen` and `--log-format`. Together they make the flag layer of ``NotifySettings``.
struct ServiceOptions: ParsableArguments {
    @OptionGroup var settings: SettingsOptions
    @OptionGroup var log: LogOptions

    @Option(
        name: .customLong("http-listen"),
        help: ArgumentHelp(
            "Address of /healthz, /readyz, /metrics and the console (setting http.listen).", valueName: "host:port"))
    var httpListen: String?

    /// Loads the settings: these flags, then `kafka`'s, then `commandFlags` (a command's own dedicated
    /// flags, by setting key, with the flag's name for messages) over environment, file and defaults.
    func loadSettings(
        kafka: KafkaOptions, commandFlags: [(key: String, flag: String, value: String?)] = [],
        environment: [String: String] = ProcessInfo.processInfo.environment
    ) async throws -> NotifySettings {
        try await settings.load(
            dedicated: [
                ("http.listen", "--http-listen", httpListen), ("kafka.bootstrap", "--bootstrap", kafka.bootstrap),
                ("kafka.connectTimeout", "--connect-timeout", kafka.connectTimeout.map { String($0) }),
                log.dedicatedFlag,
            ] + commandFlags,
            kafkaProperties: try kafka.librdkafkaProperties(), environment: environment)
    }
}

extension ServiceOptions {
    /// Fails within `kafka.connectTimeout` when no broker answers at `settings.kafka.bootstrap`, with a
    /// message naming the list and where it came from (the default 127.0.0.1:9092 included).
    func requireKafka(
        _ settings: NotifySettings, kafka: KafkaOptions,
        environment: [String: String] = ProcessInfo.processInfo.environment
    ) async throws {
        let client = KafkaClientConfiguration(
            bootstrapServers: settings.kafka.bootstrap, clientId: settings.kafka.clientId,
            properties: settings.kafka.properties)
        try await KafkaReachability.check(
            client, timeout: settings.kafka.connectTimeout,
            origin: bootstrapOrigin(kafka: kafka, environment: environment))
    }

    /// Where `kafka.bootstrap` came from, for messages: the layer that set it, or the default.
    func bootstrapOrigin(kafka: KafkaOptions, environment: [String: String]) -> String {
        if kafka.bootstrap != nil { return "--bootstrap" }
        if settings.settings.contains(where: { $0.hasPrefix("kafka.bootstrap=") }) { return "--set kafka.bootstrap" }
        if let variable = ["NOTIFY_KAFKA_BOOTSTRAP", "NOTIFY_BOOTSTRAP"].first(where: {
            environment[$0].map { !$0.isEmpty } ?? false
        }) {
            return variable
        }
        if let file = settings.config ?? environment["NOTIFY_CONFIG"].flatMap({ $0.isEmpty ? nil : $0 }) {
            return "kafka.bootstrap of \(file), or the default"
        }
        return "the default: no --bootstrap, NOTIFY_BOOTSTRAP or config file set it"
    }
}

/// A `HOST:PORT` flag's value, or a message naming the flag.
func listenAddress(_ text: String, flag: String) throws -> (host: String, port: Int) {
    switch HostAndPort.parse(text) {
    case .success(let address): return (address.host, address.port)
    case .failure(let error): throw ValidationError("\(flag): \(error.reason)")
    }
}
