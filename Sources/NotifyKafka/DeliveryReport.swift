/// Where the broker stored a produced record.
public struct DeliveryReport: Sendable, Hashable {
    public var topic: String
    public var partition: Int32
    public var offset: Int64
}
