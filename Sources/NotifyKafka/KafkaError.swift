import CRdkafka

/// An error from librdkafka or from this client, with librdkafka's error code
/// and its retriable / fatal flags.
public struct KafkaError: Error, Sendable, CustomStringConvertible, Hashable {
    /// librdkafka's `rd_kafka_resp_err_t` as an integer (negative: client-side, positive: broker).
    public let code: Int32
    /// librdkafka's symbolic name of the code (e.g. `_MSG_TIMED_OUT`, `UNKNOWN_TOPIC_OR_PART`).
    public let name: String
    /// A human-readable explanation.
    public let message: String
    /// The operation may succeed if retried.
    public let isRetriable: Bool
    /// The client instance is unusable and must be recreated.
    public let isFatal: Bool

    public init(code: Int32, name: String, message: String, isRetriable: Bool = false, isFatal: Bool = false) {
        self.code = code
        self.name = name
        self.message = message
        self.isRetriable = isRetriable
        self.isFatal = isFatal
    }

    init(_ err: rd_kafka_resp_err_t, context: String? = nil) {
        let detail = String(cString: rd_kafka_err2str(err))
        self.init(
            code: err.rawValue,
            name: String(cString: rd_kafka_err2name(err)),
            message: context.map { "\($0): \(detail)" } ?? detail,
            isRetriable: false,
            isFatal: err == RD_KAFKA_RESP_ERR__FATAL
        )
    }

    /// Takes ownership of `error` and destroys it.
    init(consuming error: OpaquePointer, context: String? = nil) {
        let code = rd_kafka_error_code(error)
        let detail = String(cString: rd_kafka_error_string(error))
        self.init(
            code: code.rawValue,
            name: String(cString: rd_kafka_error_name(error)),
            message: context.map { "\($0): \(detail)" } ?? detail,
            isRetriable: rd_kafka_error_is_retriable(error) != 0,
            isFatal: rd_kafka_error_is_fatal(error) != 0
        )
        rd_kafka_error_destroy(error)
    }

    /// An error raised by this client itself rather than by librdkafka.
    static func client(_ message: String) -> KafkaError {
        KafkaError(code: RD_KAFKA_RESP_ERR__INVALID_ARG.rawValue, name: "_INVALID_ARG", message: message)
    }

    public var description: String { "Kafka error \(name) (\(code)): \(message)" }
}
