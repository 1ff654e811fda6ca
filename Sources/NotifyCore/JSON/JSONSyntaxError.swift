/// Malformed JSON: what was wrong and at which byte offset.
public struct JSONSyntaxError: Error, Sendable, Hashable, CustomStringConvertible {
    public var offset: Int
    public var problem: String

    public var description: String { "invalid JSON at byte \(offset): \(problem)" }
}
