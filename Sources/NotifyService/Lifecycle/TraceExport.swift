import Foundation
import Logging
import OTel
import ServiceLifecycle

/// Span export over OTLP/HTTP (swift-otel), off unless the environment asks for it with the
/// OpenTelemetry variables: `OTEL_TRACES_EXPORTER=otlp`, or an OTLP endpoint
/// (`OTEL_EXPORTER_OTLP_ENDPOINT`, `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`). `OTEL_SDK_DISABLED=true`
/// and `OTEL_TRACES_EXPORTER=none` keep it off whatever else is set. swift-otel reads the others
/// (`OTEL_SERVICE_NAME`, `OTEL_EXPORTER_OTLP_PROTOCOL` `http/protobuf` or `http/json`, headers,
/// timeout, `OTEL_TRACES_SAMPLER`, `OTEL_BSP_*`). Only traces: logs and metrics keep their own
/// backends (swift-log, `/metrics`).
public enum TraceExport {
    /// Why the OpenTelemetry variables cannot be used.
    public struct ConfigurationError: Error, CustomStringConvertible {
        public let description: String
    }

    /// Whether `environment` asks for span export; throws for values notify cannot honour (an exporter
    /// other than `otlp` or `none`, OTLP over gRPC).
    public static func isRequested(by environment: [String: String]) throws -> Bool {
        if environment["OTEL_SDK_DISABLED"]?.lowercased() == "true" { return false }
        let exporter = environment["OTEL_TRACES_EXPORTER"]?.trimmingCharacters(in: .whitespaces).lowercased()
        switch exporter {
        case "none": return false
        case nil, "", "otlp": break
        case let other?:
            throw ConfigurationError(
                description: "OTEL_TRACES_EXPORTER=\(other): notify exports spans with otlp only (or none)")
        }
        guard
            exporter == "otlp" || environment["OTEL_EXPORTER_OTLP_ENDPOINT"] != nil
                || environment["OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"] != nil
        else { return false }
        for name in ["OTEL_EXPORTER_OTLP_PROTOCOL", "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL"] {
            if let value = environment[name], !["http/protobuf", "http/json"].contains(value) {
                throw ConfigurationError(
                    description: "\(name)=\(value): notify exports over OTLP/HTTP only (http/protobuf or http/json)")
            }
        }
        return true
    }

    /// Bootstraps the process's tracer (`InstrumentationSystem`) when `environment` asks for span export,
    /// and returns the service that exports the spans, to run in the command's `ServiceGroup` (listed
    /// first, so that it stops last and flushes the spans of the others' shutdown); nil when off.
    /// Call it once per process, before creating anything that reads the tracer (HTTP clients, the
    /// pipeline, sinks).
    /// - Parameter serviceName: `service.name` of the spans unless `OTEL_SERVICE_NAME` sets it.
    public static func bootstrap(
        serviceName: String, environment: [String: String] = ProcessInfo.processInfo.environment, logger: Logger
    ) throws -> (any Service)? {
        guard try isRequested(by: environment) else { return nil }
        var configuration = OTel.Configuration.default
        configuration.serviceName = serviceName
        configuration.logs.enabled = false
        configuration.metrics.enabled = false
        configuration.traces.exporter = .otlp
        configuration.diagnosticLogger = .custom(logger)
        configuration.diagnosticLogLevel = .warning  // OTEL_LOG_LEVEL lowers it.
        // swift-otel turns logs and metrics back on for OTEL_SDK_DISABLED=false; it was read above.
        let exporting = try OTel.bootstrap(
            configuration: configuration, environment: environment.filter { $0.key != "OTEL_SDK_DISABLED" })
        logger.info("Exporting spans over OTLP/HTTP")
        return exporting
    }

    /// Adds the current span's `trace_id`, `span_id` and `trace_flags` to log records, for
    /// `LoggingSystem.bootstrap(_:metadataProvider:)`; adds nothing while no span is current.
    public static var loggingMetadataProvider: Logger.MetadataProvider {
        OTel.makeLoggingMetadataProvider()
    }
}
