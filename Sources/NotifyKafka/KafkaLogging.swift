import CRdkafka
import Foundation
import Logging

/// Routes librdkafka's log lines (syslog levels) to swift-log.
let librdkafkaLogCallback:
    @convention(c) (OpaquePointer?, Int32, UnsafePointer<CChar>?, UnsafePointer<CChar>?) -> Void = {
        handle, level, facility, text in
        guard let handle, let opaque = rd_kafka_opaque(handle) else { return }
        let context = Unmanaged<ClientContext>.fromOpaque(opaque).takeUnretainedValue()
        let swiftLevel: Logger.Level =
            switch level {
            case ...2: .critical
            case 3: .error
            case 4: .warning
            case 5, 6: .info
            default: .debug
            }
        context.logger.log(
            level: swiftLevel, "\(librdkafkaText(text.map { String(cString: $0) } ?? ""))",
            metadata: ["librdkafka.facility": "\(facility.map { String(cString: $0) } ?? "")"]
        )
    }

/// librdkafka's error callback: client-level errors (all brokers down, fatal idempotence errors, ...).
let librdkafkaErrorCallback:
    @convention(c) (OpaquePointer?, Int32, UnsafePointer<CChar>?, UnsafeMutableRawPointer?) -> Void = {
        _, code, reason, opaque in
        guard let opaque else { return }
        let context = Unmanaged<ClientContext>.fromOpaque(opaque).takeUnretainedValue()
        let error = KafkaError(
            rd_kafka_resp_err_t(rawValue: code), context: reason.map { librdkafkaText(String(cString: $0)) })
        let fatal = code == RD_KAFKA_RESP_ERR__FATAL.rawValue
        context.logger.log(level: fatal ? .critical : .warning, "\(error)")
    }

/// librdkafka's text, with its hint for a broker that closed a connection it had just accepted
/// ("broker might require SASL authentication") put as what it most often is: a broker that went away.
func librdkafkaText(_ text: String) -> String {
    text.replacingOccurrences(
        of:
            "Disconnected: verify that security.protocol is correctly configured, broker might require SASL authentication",
        with:
            "Disconnected: the broker closed the connection (it may have stopped; if it is running, check that security.protocol matches its listener, which may require TLS or SASL)"
    )
}

/// What the C callbacks of one client need: reached through the client's opaque pointer.
class ClientContext: @unchecked Sendable {
    let logger: Logger
    /// Where statistics go, if the client reports them; set before the client is made, never after.
    var statistics: KafkaStatisticsReporting?

    init(logger: Logger) {
        self.logger = logger
    }
}

extension NativeConfiguration {
    /// Installs the log and error callbacks and the opaque pointer to `context`.
    func install(_ context: ClientContext) throws {
        try set("log.queue", "false")
        rd_kafka_conf_set_log_cb(pointer, librdkafkaLogCallback)
        rd_kafka_conf_set_error_cb(pointer, librdkafkaErrorCallback)
        rd_kafka_conf_set_opaque(pointer, Unmanaged.passUnretained(context).toOpaque())
    }
}
