import CRdkafka

/// Owns an `rd_kafka_conf_t` until it is handed to `rd_kafka_new`.
struct NativeConfiguration {
    let pointer: OpaquePointer

    init(_ properties: [String: String]) throws {
        pointer = rd_kafka_conf_new()
        for (key, value) in properties.sorted(by: { $0.key < $1.key }) {
            try set(key, value)
        }
    }

    func set(_ key: String, _ value: String) throws {
        var errorText = [CChar](repeating: 0, count: 512)
        let result = rd_kafka_conf_set(pointer, key, value, &errorText, errorText.count)
        guard result == RD_KAFKA_CONF_OK else {
            rd_kafka_conf_destroy(pointer)
            throw KafkaError.client("property \(key): \(text(of: errorText))")
        }
    }
}

/// Creates a client handle, taking ownership of `configuration`.
func makeNativeClient(type: rd_kafka_type_t, configuration: NativeConfiguration) throws -> OpaquePointer {
    var errorText = [CChar](repeating: 0, count: 512)
    guard let handle = rd_kafka_new(type, configuration.pointer, &errorText, errorText.count) else {
        rd_kafka_conf_destroy(configuration.pointer)
        throw KafkaError.client("could not create the Kafka client: \(text(of: errorText))")
    }
    return handle
}

/// The text librdkafka wrote into an error buffer.
func text(of buffer: [CChar]) -> String {
    buffer.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }
}
