/// A command that could not do its work for a reason outside its arguments (an unreachable broker, a
/// taken port): printed as `Error: <message>` without the usage text a ``ValidationError`` brings.
struct CommandFailure: Error, CustomStringConvertible {
    let description: String

    init(_ message: String) {
        description = message
    }
}
