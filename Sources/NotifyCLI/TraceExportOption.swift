import ArgumentParser
import Logging
import NotifyService
import ServiceLifecycle

extension TraceExport {
    /// ``TraceExport/bootstrap(serviceName:environment:logger:)`` for a command: OTEL_* values it
    /// cannot honour end the command with the reason.
    static func bootstrapForCommand(serviceName: String, logger: Logger) throws -> (any Service)? {
        do {
            return try bootstrap(serviceName: serviceName, logger: logger)
        } catch let error as ConfigurationError {
            throw ValidationError(error.description)
        }
    }
}
