/// A type with one canonical JSON form, written by ``CoreJSON``.
public protocol JSONRepresentable {
    /// The JSON form of this value.
    var jsonValue: JSONValue { get }
}
