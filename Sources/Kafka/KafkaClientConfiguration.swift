import CRdkafka

/// Settings shared by every Kafka client: where the cluster is and any
/// librdkafka property (`security.protocol`, `sasl.*`, `ssl.*`, ...), passed
/// through unchanged.
public struct KafkaClientConfiguration: Sendable {
    /// `HOST:PORT,...`
    public var bootstrapServers: String
    /// Reported to the brokers; shows in their logs and metrics.
    public var clientId: String
    /// librdkafka properties, applied after the typed settings, so they win.
    public var properties: [String: String]

    public init(bootstrapServers: String, clientId: String = "notify", properties: [String: String] = [:]) {
        self.bootstrapServers = bootstrapServers
        self.clientId = clientId
        self.properties = properties
    }

    /// The typed settings and the pass-through properties, merged: later wins.
    func merged(with defaults: [String: String]) -> [String: String] {
        var result = defaults
        result["bootstrap.servers"] = bootstrapServers
        result["client.id"] = clientId
        for (key, value) in properties { result[key] = value }
        return result
    }
}

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

extension KafkaClientConfiguration {
    /// A librdkafka property written `name=value` (as `-X` takes it), or nil if it is not one.
    public static func property(_ text: String) -> (name: String, value: String)? {
        guard let equals = text.firstIndex(of: "="), equals != text.startIndex else { return nil }
        return (String(text[..<equals]), String(text[text.index(after: equals)...]))
    }
}
