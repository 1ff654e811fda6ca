/// A field of an event that is missing or wrong: the dotted path of the field
/// (`attachment.bytes`, `devices[1].platform`) and what was wrong with it.
public struct FieldError: Error, Sendable, Hashable {
    public var field: String
    public var problem: String

    public init(field: String, problem: String) {
        self.field = field
        self.problem = problem
    }
}
