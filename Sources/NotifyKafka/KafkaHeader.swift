/// A record header. Kafka allows repeated names and null values.
public struct KafkaHeader: Sendable, Hashable {
    public var name: String
    public var value: [UInt8]?

    public init(name: String, value: [UInt8]?) {
        self.name = name
        self.value = value
    }

    public init(name: String, string: String) {
        self.init(name: name, value: Array(string.utf8))
    }
}

extension Array where Element == KafkaHeader {
    /// The value of the first header called `name`, as UTF-8 text.
    public func string(for name: String) -> String? {
        guard let header = first(where: { $0.name == name }), let value = header.value else { return nil }
        return String(decoding: value, as: UTF8.self)
    }
}
