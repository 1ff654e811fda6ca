/// One event the chat backend publishes. Each type has one topic, one `type`
/// string, and one JSON form (``JSONRepresentable/jsonValue``) that is also
/// its `Codable` form; `Schemas/<topic>.schema.json` describes it.
public protocol ChatEvent: JSONRepresentable, Sendable, Hashable, Codable {
    /// The value of the `type` field.
    static var eventType: String { get }
    /// The topic the event is published on.
    static var topic: String { get }
    /// The unique event id.
    var id: String { get }
    /// Event time.
    var at: EventTime { get }
    /// The record key on its topic (conversation id or user id).
    var key: String { get }
    /// Reads the event from the members of its JSON object (strict).
    init(reading fields: FieldReader) throws(FieldError)
}

extension ChatEvent {
    /// Decodes the event from a JSON value, strictly.
    public init(json: JSONValue) throws(FieldError) {
        let fields = try FieldReader(json)
        try fields.constant("type", Self.eventType)
        try self.init(reading: fields)
    }

    public init(from decoder: any Decoder) throws {
        let json = try JSONValue(from: decoder)
        do {
            try self.init(json: json)
        } catch {
            throw DecodingError.dataCorrupted(
                .init(
                    codingPath: decoder.codingPath,
                    debugDescription: "\(Self.topic): field \"\(error.field)\": \(error.problem)"))
        }
    }

    public func encode(to encoder: any Encoder) throws {
        try jsonValue.encode(to: encoder)
    }

    /// The members every event has: `type`, `id`, `at`.
    func envelope(capacity: Int) -> JSONObjectBuilder {
        var object = JSONObjectBuilder(capacity: capacity)
        object["type"] = .string(Self.eventType)
        object["id"] = .string(id)
        object["at"] = .string(at.rfc3339)
        return object
    }
}
