import ArgumentParser
import Foundation
import Logging
import NotifyService

/// The metadata provider every command's logging is bootstrapped with: asked on every log line, in both
/// formats. swift-otel's (``TraceExport/loggingMetadataProvider``): while a span is current (a sink's
/// delivery attempt, an HTTP request) its `trace_id` and `span_id` become top-level fields of JSON
/// lines; it gives nothing otherwise, and nothing while tracing is off.
let logMetadataProvider: Logger.MetadataProvider? = TraceExport.loggingMetadataProvider

/// `--log-format` (setting `log.format`). Commands with settings (``ServiceOptions``, `replay`) pass it
/// to the flag layer; the others (`broker`, `inspect`, `produce`, `topics create`) read it here: the flag,
/// else `NOTIFY_LOG_FORMAT`, else `text`, checked as the setting is.
struct LogOptions: ParsableArguments {
    @Option(
        name: .customLong("log-format"),
        help: ArgumentHelp(
            "Log lines on standard error: text or json, one JSON object per line (setting log.format, env NOTIFY_LOG_FORMAT).",
            valueName: "format"))
    var logFormat: String?

    /// The dedicated flag of `log.format`, for ``SettingsOptions/load(dedicated:kafkaProperties:environment:)``.
    var dedicatedFlag: (key: String, flag: String, value: String?) { ("log.format", "--log-format", logFormat) }

    /// Starts the logging of a command without settings, at swift-log's default level (its loggers set their own).
    func startLogging(environment: [String: String] = ProcessInfo.processInfo.environment) throws {
        NotifyLogging.bootstrap(
            format: try LogFormat.resolve(flag: logFormat, environment: environment), level: .info,
            metadataProvider: logMetadataProvider)
    }
}

extension NotifySettings {
    /// Starts the process's logging as `log.format` and `log.level` say: call it once the settings are
    /// read, before any `Logger` is made.
    func startLogging() {
        NotifyLogging.bootstrap(
            format: logFormat, level: Logger.Level(rawValue: logLevel) ?? .info, metadataProvider: logMetadataProvider)
    }
}

extension NotifyCommand {
    /// Parses the command line and runs the command, as `main()` does, except that once a command has
    /// started JSON logging, the error that ends it is logged as one JSON line (level `critical`, the exit
    /// status in `metadata.exit_status`) instead of `Error: ...` in plain text: every line on standard error
    /// of a JSON-format run is JSON. The exit status is the same either way.
    public static func execute(_ arguments: [String]? = nil) async {
        do {
            var command = try await asyncParseAsRoot(arguments)
            if var asyncCommand = command as? AsyncParsableCommand {
                try await asyncCommand.run()
            } else {
                try command.run()
            }
        } catch {
            guard NotifyLogging.format == .json else { exit(withError: error) }
            let status = exitCode(for: error)
            let message = self.message(for: error)
            if !message.isEmpty {
                Logger(label: "notify").critical("\(message)", metadata: ["exit_status": "\(status.rawValue)"])
            }
            Foundation.exit(status.rawValue)
        }
    }
}
