import Logging
import Synchronization

/// How a `notify` process writes its log lines to standard error (setting `log.format`).
public enum LogFormat: String, CaseIterable, Sendable, Hashable {
    /// swift-log's readable lines: `2026-05-04T10:00:00+0000 info notify.pipeline: key=value [Module] message`.
    case text
    /// One JSON object per line (``JSONLogHandler``): `timestamp`, `level`, `logger`, `message`, `metadata`,
    /// `source`, and `trace_id` / `span_id` when a span is active.
    case json
}

/// The process's log backend: which handler every `Logger` gets, in which format, at which level, with
/// which metadata provider.
///
/// Every command calls ``bootstrap(format:level:metadataProvider:)`` once, first thing after its settings
/// are read and before it makes a `Logger` (a logger made before keeps swift-log's default handler). All
/// loggers made afterwards, notify's own and every library's (librdkafka's lines come through the client's
/// logger, Hummingbird's and ServiceLifecycle's through the loggers they are given), write in that format.
///
/// Tracing plugs in with its metadata provider, e.g. swift-otel's:
///
/// ```swift
/// NotifyLogging.bootstrap(format: .json, level: .info, metadataProvider: OTel.makeLoggingMetadataProvider())
/// ```
///
/// Both formats ask the provider on every line; in JSON its `trace_id` and `span_id` become top-level
/// fields, its other keys (`trace_flags`) stay in `metadata`.
public enum NotifyLogging {
    private static let installed = Mutex<LogFormat?>(nil)

    /// Installs notify's handler as swift-log's backend for the whole process.
    ///
    /// swift-log allows one bootstrap per process: the first call wins, later ones change nothing and
    /// return false (so a test process, or a command that runs another's code, cannot crash on a second one).
    /// - Parameters:
    ///   - format: ``LogFormat/text`` (swift-log's `StreamLogHandler` on standard error) or ``LogFormat/json``.
    ///   - level: the level of every new logger (setting `log.level`); a logger may still set its own.
    ///   - metadataProvider: asked for metadata on every line (task-local context such as the active span);
    ///     `nil` for none. It also becomes `LoggingSystem.metadataProvider`.
    /// - Returns: whether this call installed the backend.
    @discardableResult
    public static func bootstrap(
        format: LogFormat, level: Logger.Level = .info, metadataProvider: Logger.MetadataProvider? = nil
    ) -> Bool {
        installed.withLock { current in
            guard current == nil else { return false }
            current = format
            LoggingSystem.bootstrap(
                { label, provider in
                    handler(label: label, format: format, level: level, metadataProvider: provider)
                }, metadataProvider: metadataProvider)
            return true
        }
    }

    /// The format ``bootstrap(format:level:metadataProvider:)`` installed, or nil before it ran.
    public static var format: LogFormat? { installed.withLock { $0 } }

    /// The handler the backend gives a logger labelled `label`: swift-log's `StreamLogHandler` for text,
    /// ``JSONLogHandler`` for JSON, both writing whole lines to `output` (standard error).
    public static func handler(
        label: String, format: LogFormat, level: Logger.Level = .info, metadataProvider: Logger.MetadataProvider?,
        output: LogOutput = .standardError
    ) -> any LogHandler {
        switch format {
        case .text:
            var handler = StreamLogHandler(
                label: label, stream: LogOutputStream(output: output), metadataProvider: metadataProvider)
            handler.logLevel = level
            return handler
        case .json:
            var handler = JSONLogHandler(label: label, metadataProvider: metadataProvider, output: output)
            handler.logLevel = level
            return handler
        }
    }
}

/// A ``LogOutput`` as the stream of a `StreamLogHandler`, which writes each line whole in one call.
private struct LogOutputStream: TextOutputStream, Sendable {
    let output: LogOutput

    mutating func write(_ string: String) {
        output.write(Array(string.utf8))
    }
}

extension LogFormat {
    /// The format of a command that reads no other setting (`broker`, `inspect`, `produce`, `topics`):
    /// `flag` (`--log-format`), else `NOTIFY_LOG_FORMAT`, else `text`.
    /// - Throws: ``SettingsError`` naming the source and the allowed values, as the setting `log.format` is refused.
    public static func resolve(flag: String?, environment: [String: String]) throws -> LogFormat {
        let definition = SettingsCatalogue.definition("log.format")!
        let variable = definition.environmentVariable
        let found: (value: String, source: String)? =
            if let flag { (flag, "flag --log-format") } else {
                environment[variable].flatMap { $0.isEmpty ? nil : ($0, "environment variable \(variable)") }
            }
        guard let found else { return .text }
        switch definition.check(.string(found.value)) {
        case .success(.text(let word)):
            guard let format = LogFormat(rawValue: word) else {
                preconditionFailure("log.format's choices are the LogFormat cases")
            }
            return format
        case .success:
            preconditionFailure("log.format is a choice")
        case .failure(let kind):
            throw SettingsError(problems: [SettingsProblem(source: found.source, path: definition.key, kind: kind)])
        }
    }
}
